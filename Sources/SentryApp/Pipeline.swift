import FaceDetection
import SentryCore
import Serial
import Video

/// How the pipeline turns faces into commands.
public struct PipelineSettings: Sendable {
    public var mapper: AngleMapper
    public var tiltEnabled: Bool
    public var deadband: Int
    public var lostAfter: Double

    public init(mapper: AngleMapper = AngleMapper(), tiltEnabled: Bool = false, deadband: Int = 0, lostAfter: Double = 0) {
        self.mapper = mapper
        self.tiltEnabled = tiltEnabled
        self.deadband = deadband
        self.lostAfter = lostAfter
    }
}

/// What happened to one frame.
public struct FrameResult: Sendable {
    public var index: Int
    public var timestamp: Double
    public var faces: [Box]
    public var target: Box?
    public var aim: Aim?
    /// The commands this frame handed to the serial link (after de-duplication).
    public var commands: [Command]
    /// Seconds spent per stage.
    public var detectSeconds: Double
    public var selectAndMapSeconds: Double
    public var writeSeconds: Double
}

/// One frame at a time (SPEC §1): detect → select → map → filter → write.
public final class Pipeline {
    public let detector: any FaceDetector
    public let output: any CommandOutput
    public let settings: PipelineSettings
    private var selector = TargetSelector()
    private var filter: CommandFilter

    public init(detector: any FaceDetector, output: any CommandOutput, settings: PipelineSettings) {
        self.detector = detector
        self.output = output
        self.settings = settings
        filter = CommandFilter(deadband: settings.deadband, lostAfter: settings.lostAfter, tiltEnabled: settings.tiltEnabled)
    }

    /// Runs one frame through every stage and writes its commands.
    public func process(_ frame: Frame) throws(SerialError) -> FrameResult {
        let t0 = monotonicSeconds()
        let faces = detector.detectFaces(in: frame.image)
        let t1 = monotonicSeconds()
        if output.takeReconnected() { filter.reset() }
        let target = selector.select(from: faces)
        let aim = target.map { settings.mapper.aim(at: $0, frameWidth: frame.image.width, frameHeight: frame.image.height) }
        let commands = filter.commands(for: aim, at: frame.timestamp)
        let t2 = monotonicSeconds()
        try output.send(commands)
        let t3 = monotonicSeconds()
        return FrameResult(index: frame.index, timestamp: frame.timestamp, faces: faces, target: target, aim: aim,
                           commands: commands, detectSeconds: t1 - t0, selectAndMapSeconds: t2 - t1, writeSeconds: t3 - t2)
    }

    /// The camera went away: sweep until it is back.
    public func cameraLost() throws(SerialError) {
        selector = TargetSelector()
        try output.send(filter.lostNow())
    }

    /// Sends the parting command (`L`, centre, or nothing) and flushes.
    public func finish(with exitCommand: ExitCommand, timeout: Double = 1) throws(SerialError) {
        try output.send(exitCommand.commands(tiltEnabled: settings.tiltEnabled))
        try output.flush(timeout: timeout)
    }
}

/// What the turret is told when sentry exits (`--on-exit`).
public enum ExitCommand: String, CaseIterable, Sendable {
    /// `L`: sweep, as if nobody were there.
    case scan
    /// Aim at 90° on every axis in use.
    case center
    /// Leave the turret where it is.
    case none

    func commands(tiltEnabled: Bool) -> [Command] {
        switch self {
        case .scan: [.lost]
        case .center: tiltEnabled ? [.pan(90), .tilt(90)] : [.pan(90)]
        case .none: []
        }
    }
}
