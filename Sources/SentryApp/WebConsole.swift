import Config
import Console
import Expressions
import FaceDetection
import FoundationEssentials
import Geometry
import Imaging
import Logging
import MonotonicTime
import Serial
import Synchronization
import Tracking
import TurretProtocol
import TurretLinks
import Video
import WebServing

/// The settings that change while running, as the pipeline takes them.
public struct LiveSettings: Sendable {
    public var pipeline: PipelineSettings
    public var detector: DetectorOptions

    public init(pipeline: PipelineSettings, detector: DetectorOptions) {
        self.pipeline = pipeline
        self.detector = detector
    }
}

/// `--web`: where the console listens and how its settings are read and saved.
public struct WebOptions: Sendable {
    public var address: ListenAddress
    public var token: String?
    /// The names and pages it answers besides its own (`--web-allow-host`, `--web-allow-origin`).
    public var rules = SiteRules()
    /// At most this many video frames a second (`--web-fps`).
    public var framesPerSecond: Double = 15
    /// At most this many connections at once (`--web-max-clients`).
    public var maximumClients = ConsoleServer.defaultMaximumClients
    /// The live settings' values now, by long flag name.
    public var values: [String: String]
    /// Reads a full set of live values exactly as the flags are read: the
    /// settings, or the flag's own one-line message.
    public var parse: @Sendable ([String: String]) -> Result<LiveSettings, ConsoleRefusal>
    /// Which of them are on/off switches (`true`/`false` in the file).
    public var switches: Set<String>
    /// The file Save writes (the one `--config` reads).
    public var configPath: String
    /// Keys also given as flags: the flag wins over the file at the next start.
    public var keysGivenAsFlags: Set<String> = []

    public init(
        address: ListenAddress, token: String?, values: [String: String], switches: Set<String>, configPath: String,
        parse: @escaping @Sendable ([String: String]) -> Result<LiveSettings, ConsoleRefusal>
    ) {
        self.address = address
        self.token = token
        self.values = values
        self.switches = switches
        self.configPath = configPath
        self.parse = parse
    }
}

/// The console's requests, checked when they arrive and held for the frame
/// loop, which applies them between frames.
final class LiveControl: ConsoleController {
    private let options: WebOptions
    private let logger: Logger
    private let state: Mutex<State>
    /// One change at a time (a detector may take a moment to build).
    private let changing = Mutex(())

    struct State {
        var values: [String: String]
        var pending: LiveSettings?
        var detector: DetectorHandOff?
        var steering: [SteeringRequest] = []
    }

    /// A detector built off the frame loop, for it to take.
    struct DetectorHandOff: @unchecked Sendable {
        var detector: any FaceDetector
        var name: String
    }

    init(options: WebOptions, logger: Logger) {
        self.options = options
        self.logger = logger
        state = Mutex(State(values: options.values))
    }

    var settings: [String: String] { state.withLock { $0.values } }

    func change(_ changes: [String: String]) -> Result<[String: String], ConsoleRefusal> {
        changing.withLock { _ in
            let current = settings
            let values = current.merging(changes) { $1 }
            let live: LiveSettings
            switch options.parse(values) {
            case .success(let parsed): live = parsed
            case .failure(let refusal): return .failure(refusal)
            }
            var handOff: DetectorHandOff?
            if ["detector", "min-score", "detect-fps", "expressions", "expressions-fps"].contains(where: { values[$0] != current[$0] }) {
                do {
                    let (detector, name) = try Runner.makeDetector(live.detector, logger: logger)
                    handOff = DetectorHandOff(detector: detector, name: name)
                } catch {
                    return .failure(ConsoleRefusal("\(error)"))
                }
            }
            state.withLock { state in
                state.values = values
                state.pending = live
                if let handOff { state.detector = handOff }
            }
            return .success(values)
        }
    }

    func save() -> Result<String, ConsoleRefusal> {
        let values = settings.sorted { $0.key < $1.key }.map { key, value -> (key: String, value: ConfigValue) in
            if options.switches.contains(key) { return (key, .bool(value == "true")) }
            if let integer = Int(value) { return (key, .integer(integer)) }
            if let number = Double(value) { return (key, .number(number)) }
            return (key, .string(value))
        }.filter { !$0.value.description.isEmpty }
        do {
            try ConfigFile.write(values, to: options.configPath)
        } catch {
            return .failure(ConsoleRefusal(error.description))
        }
        let overridden = options.keysGivenAsFlags.intersection(values.map(\.key)).sorted()
        let note = overridden.isEmpty ? "" : "; \(overridden.map { "--\($0)" }.joined(separator: ", ")) also given as flags, which win at the next start"
        return .success("saved to \(options.configPath)\(note)")
    }

    func steer(_ request: SteeringRequest) {
        state.withLock { $0.steering.append(request) }
    }

    /// What the frame loop should apply before its next frame.
    func takeRequests() -> (settings: LiveSettings?, detector: DetectorHandOff?, steering: [SteeringRequest]) {
        state.withLock { state in
            defer {
                state.pending = nil
                state.detector = nil
                state.steering.removeAll()
            }
            return (state.pending, state.detector, state.steering)
        }
    }
}

/// `--web` seen from the frame loop: requests applied before each frame,
/// each frame's status published after it. Neither step waits for the
/// server; encoding and serving run on their own threads.
final class WebConsole: FrameObserver {
    let hub: ConsoleHub
    private let server: ConsoleServer
    private let control: LiveControl
    /// The link whose state the console shows.
    private let output: any CommandOutput
    private var detectorName: String
    private var rate = FrameRateMeter()

    /// The followed face's reading, drawn over the video (`--expressions`).
    private let expressions: ExpressionWatcher?

    init(options: WebOptions, detectorName: String, output: any CommandOutput, expressions: ExpressionWatcher?, logger: Logger) throws {
        self.expressions = expressions
        hub = try ConsoleHub(framesPerSecond: options.framesPerSecond)
        control = LiveControl(options: options, logger: logger)
        server = ConsoleServer(
            address: options.address, token: options.token, rules: options.rules, maximumClients: options.maximumClients, hub: hub,
            controller: control, log: RefusalLog(logger: logger))
        self.detectorName = detectorName
        self.output = output
        do {
            try server.start()
        } catch {
            hub.close()
            throw error
        }
        logger.notice("web console on http://\(options.address)/\(options.token == nil ? "" : "?token=…")")
    }

    /// Applies the console's requests to `pipeline`, in the frame's size.
    func willProcess(_ frame: Frame, pipeline: Pipeline) {
        let (settings, detector, steering) = control.takeRequests()
        if let settings { pipeline.change(settings: settings.pipeline) }
        if let detector {
            pipeline.change(detector: detector.detector)
            detectorName = detector.name
            hub.log("settings", "detector: \(detector.name)")
        }
        for request in steering { pipeline.steer(request, frameWidth: frame.image.width, frameHeight: frame.image.height) }
    }

    /// Publishes what the pipeline did with the frame.
    func didProcess(_ context: FrameContext) {
        let result = context.result, pipeline = context.pipeline, frame = context.frame
        let now = monotonicSeconds()
        let fps = rate.tick(at: now)
        let scores = pipeline.detector.lastScores
        let faces = result.faces.enumerated().map { index, box in
            FaceBox(box, score: index < scores.count ? scores[index] : nil)
        }
        let steering =
            switch pipeline.steering {
            case .tracking: "auto"
            case .manual: "manual"
            case .manualScan: "manual-scan"
            }
        var status = FrameStatus(
            frame: result.index, time: result.timestamp, width: frame.image.width, height: frame.image.height,
            faces: faces, target: result.target.flatMap { result.faces.firstIndex(of: $0) },
            aim: result.aim.map(Angles.init), commanded: Angles(result.commanded), commands: result.commands.map(\.description),
            mode: StatusLine.hud(
                for: result.aim, locked: result.isLocked, tiltEnabled: pipeline.settings.tiltEnabled, steering: pipeline.steering, spared: result.spared),
            steering: steering, locked: result.isLocked, fps: fps, detectMs: result.detectSeconds * 1000,
            loopMs: (now - context.capturedAt) * 1000, serial: output.state.description, detector: detectorName)
        status.face = expressions?.latest.map(Self.faceStatus)
        hub.publish(status, frame: frame, capturedAt: context.capturedAt)
    }

    /// A reading as the page takes it (rounded: it is drawn, not computed with).
    static func faceStatus(_ face: FollowedFace) -> FaceReadingStatus {
        func round(_ value: Float, _ places: Float) -> Float { (value * places).rounded() / places }
        var points: [Float] = []
        points.reserveCapacity(2 * FaceLandmarks.count)
        for point in face.landmarks.points { points += [round(point.x, 10), round(point.y, 10)] }
        let (scores, pose, gaze) = (face.reading.scores, face.reading.pose, face.reading.gaze)
        return FaceReadingStatus(
            points: points,
            expressions: Dictionary(uniqueKeysWithValues: zip(ExpressionScores.names, scores.values.map { round($0, 100) })),
            states: ExpressionState.allCases.filter(face.states.contains).map(\.rawValue),
            pose: ["yaw": round(pose.yaw, 10), "pitch": round(pose.pitch, 10), "roll": round(pose.roll, 10)],
            gaze: [
                "left": [round(gaze.left.x, 100), round(gaze.left.y, 100)], "right": [round(gaze.right.x, 100), round(gaze.right.y, 100)],
            ],
            target: face.isTarget)
    }

    func cameraLost(_ error: VideoError, lockEvent: LockEventContext?) {
        hub.log("camera", error.description)
    }

    func cameraBack(_ path: String) {
        hub.log("camera", "camera \(path) is back")
    }

    /// Ends the streams first, so that the server's connections can finish.
    func close() {
        hub.close()
        server.stop()
    }
}
