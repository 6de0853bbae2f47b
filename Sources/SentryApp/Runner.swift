import Devices
import FaceDetection
import Foundation
import Hooks
import Logging
import Relay
import SentryCore
import Serial
import ServoSim
import Tracking
import Video
import VirtualCamera

/// Everything `sentry --camera … --serial …` needs, already validated.
public struct RunOptions: Sendable {
    public var camera: String
    /// A tty path, or `sim` for the in-process simulated servo.
    public var serial: String
    public var baudRate: Int = 9600
    /// Seconds to wait after opening the port; `nil` for 2 s on real devices, 0 on ptys.
    public var bootWait: Double?
    /// Play a file again and again.
    public var loop = false
    public var size: FrameSize?
    /// Camera frame rate and pixel format (`nil`: the camera's own / negotiated).
    public var framesPerSecond: Double?
    public var pixelFormat: String?
    public var controls = CameraControls()
    public var realtime = false
    /// Stop after this many frames (`nil`: at the end of the stream).
    public var maxFrames: Int?
    /// The simulated servo's speed (`--servo-speed`).
    public var servoSecondsPer60Degrees = ServoMotion.typicalSecondsPer60Degrees
    /// The virtual camera's true field of view (`--sim-fov`; `nil`: the
    /// tracker's `--fov`).
    public var virtualFieldOfView: Double?
    public var detector = DetectorOptions()
    public var settings = PipelineSettings()
    public var onExit = ExitCommand.scan
    /// Commands run when the target is locked and when the lock is lost.
    public var hooks = LockHookSettings()
    /// Print the HUD line on stderr.
    public var showStatus = true
    /// Print one line per frame that wrote commands, on stdout.
    public var printTrack = false
    /// The web console (`--web`), off when `nil`.
    public var web: WebOptions?
    /// Keep every frame's result in the summary (tests); off for long runs,
    /// where it would grow without bound.
    public var keepResults = false

    public init(camera: String, serial: String) {
        self.camera = camera
        self.serial = serial
    }
}

/// The special `--serial` value that runs the simulated servo in-process.
public let simulatedSerialName = "sim"

/// `--camera sim:IMAGE`: the virtual camera on the simulated turret.
public let virtualCameraPrefix = "sim:"

/// Opens the camera, detector and serial link, and runs the pipeline until
/// the stream ends or SIGINT/SIGTERM arrives.
public enum Runner {
    public struct Summary: Sendable {
        public var frames: Int
        public var bytesWritten: Int
        public var results: [FrameResult]
        /// The simulated servo's angles over time (`--serial sim` only).
        public var servoTrack: [SimulatedServo.Sample]
        public var receivedBytes: [UInt8]
        /// What became of the `--on-lock`/`--on-lost` runs.
        public var hooks: HookRunner.Counts?
    }

    public static func run(_ options: RunOptions, logger: Logger) throws -> Summary {
        StopSignal.install()
        let (detector, detectorName) = try makeDetector(options.detector, logger: logger)
        let virtualScene = options.camera.hasPrefix(virtualCameraPrefix) ? String(options.camera.dropFirst(virtualCameraPrefix.count)) : nil
        let simulator = options.serial == simulatedSerialName
            ? try SimulatedServo(secondsPer60Degrees: options.servoSecondsPer60Degrees, frameClock: virtualScene != nil) : nil
        defer { simulator?.stop() }
        let output: any CommandOutput
        let serialPort: SerialCommandOutput?
        if let relay = try? RelayURL(parsing: options.serial) {
            output = try WebSocketCommandOutput(url: relay, logger: logger)
            serialPort = nil
        } else {
            serialPort = try SerialCommandOutput(path: simulator?.devicePath ?? options.serial, baudRate: options.baudRate,
                                                 bootWait: options.bootWait, logger: logger)
            output = serialPort!
        }
        defer { serialPort?.close(); (output as? WebSocketCommandOutput)?.close() }
        var source: any FrameSource
        if let virtualScene, let simulator {
            source = try openVirtualCamera(scene: virtualScene, options, simulator: simulator, output: output)
        } else {
            source = try openCamera(options, logger: logger)
        }
        defer { source.close() }
        logger.info("camera \(source.name) \(source.width)x\(source.height) @ \(source.framesPerSecond) fps; detector \(detectorName); serial \(options.serial) at \(options.baudRate) baud")

        var settings = options.settings
        if virtualScene != nil { settings.turretClock = .frames }
        let pipeline = Pipeline(detector: detector, output: output, settings: settings)
        let web = try options.web.map { try WebConsole(options: $0, detectorName: detectorName, logger: logger) }
        defer { web?.close() }
        source.keepsColour = web != nil
        let hooks = options.hooks.onLock != nil || options.hooks.onLost != nil ? LockHooks(settings: options.hooks, logger: logger) : nil
        let status = StatusPrinter(enabled: options.showStatus)
        // Serial hotplug: a port that appears is tried at once, not at the next poll.
        let serialEvents = simulator == nil && serialPort != nil ? DeviceMonitor(subsystems: ["tty"]) : nil
        var results: [FrameResult] = []
        var frameCount = 0
        while !StopSignal.isRequested, frameCount < options.maxFrames ?? .max {
            let next: Frame?
            do {
                next = try source.nextFrame()
            } catch {
                guard source is V4L2Camera else { throw error }
                // A live camera that goes away: sweep, keep the serial link, wait for it.
                logger.warning("\(error.description)")
                web?.log("camera", error.description)
                if let event = try pipeline.cameraLost() { report(event, turret: pipeline.commanded, frameTime: pipeline.lastFrameTime, hooks: hooks, logger: logger) }
                status.update(hud: "camera lost", serial: output.state)
                source.close()
                source = try waitForCamera(options, logger: logger)
                source.keepsColour = web != nil
                logger.notice("camera \(options.camera) is back")
                web?.log("camera", "camera \(options.camera) is back")
                continue
            }
            guard let frame = next else { break }
            let capturedAt = monotonicSeconds()
            for event in serialEvents?.events(timeout: 0) ?? [] {
                if event.action == "add" {
                    logger.notice("udev: a serial port appeared")
                    serialPort?.retryNow()
                } else if event.action == "remove", let node = event.path {
                    serialPort?.deviceRemoved(node)
                }
            }
            web?.applyRequests(to: pipeline, frameWidth: frame.image.width, frameHeight: frame.image.height)
            let result = try pipeline.process(frame)
            web?.publish(result, frame: frame, capturedAt: capturedAt, pipeline: pipeline, serial: output.state)
            frameCount += 1
            if options.keepResults { results.append(result) }
            if let event = result.lockEvent { report(event, turret: result.commanded, frameTime: result.timestamp, hooks: hooks, logger: logger) }
            if let shot = result.commands.first(where: { $0.axis == .trigger }) { logger.notice("fire: sent \(shot)") }
            status.update(hud: StatusLine.hud(for: result.aim, locked: result.isLocked, tiltEnabled: pipeline.settings.tiltEnabled,
                                              steering: pipeline.steering),
                          serial: output.state)
            if options.printTrack, !result.commands.isEmpty {
                simulator?.waitForBytes(output.bytesWritten, timeout: 0.2)
                print(trackLine(result, servo: simulator?.current))
            }
        }
        try pipeline.finish(with: options.onExit)
        hooks?.finish()
        simulator?.waitForBytes(output.bytesWritten, timeout: 0.5)
        status.finish()
        if StopSignal.isRequested { logger.info("stopped by signal") }
        return Summary(frames: frameCount, bytesWritten: output.bytesWritten, results: results,
                       servoTrack: simulator?.track ?? [], receivedBytes: simulator?.receivedBytes ?? [],
                       hooks: hooks?.runner.counts)
    }

    /// Logs a lock event and runs its hook.
    static func report(_ event: LockOn.Event, turret: Aim, frameTime: Double, hooks: LockHooks?, logger: Logger) {
        switch event {
        case .locked(let box): logger.notice("target locked at \(box)")
        case .lost(let box): logger.notice("lock lost (target last seen at \(box))")
        }
        hooks?.handle(event, turret: turret, frameTime: frameTime)
    }

    /// `--camera sim:IMAGE`: frames rendered where the simulated servo
    /// points, on the frame clock. Before each frame the simulator takes in
    /// every byte written so far, so the loop's lag is the servo's, never
    /// the machine's.
    static func openVirtualCamera(scene: String, _ options: RunOptions, simulator: SimulatedServo,
                                  output: any CommandOutput) throws(VideoError) -> any FrameSource {
        try VirtualCamera(scenePath: scene, size: options.size ?? FrameSize(width: 640, height: 480),
                          fieldOfView: options.virtualFieldOfView ?? options.settings.tracking.fieldOfView,
                          framesPerSecond: options.framesPerSecond ?? 30, realtime: options.realtime) { time in
            simulator.waitForBytes(output.bytesWritten, timeout: 0.5)
            let state = simulator.advance(to: time)
            return (state.panPosition, state.tiltPosition)
        }
    }

    /// A frame source for `--camera`: a V4L2 device node, or a file.
    public static func openCamera(_ path: String, size: FrameSize?, realtime: Bool, loop: Bool = false,
                                  framesPerSecond: Double? = nil, pixelFormat: String? = nil,
                                  controls: CameraControls = CameraControls(), logger: Logger? = nil) throws(VideoError) -> any FrameSource {
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFCHR {
            let camera = try V4L2Camera(path: path, size: size, framesPerSecond: framesPerSecond, fourcc: pixelFormat,
                                        controls: controls, isCancelled: { StopSignal.isRequested })
            for note in camera.notes { logger?.notice("\(note)") }
            return camera
        }
        return try FileFrameSource.open(path: path, size: size, realtime: realtime, loop: loop, isCancelled: { StopSignal.isRequested })
    }

    /// The camera `options` describe.
    static func openCamera(_ options: RunOptions, logger: Logger) throws(VideoError) -> any FrameSource {
        try openCamera(options.camera, size: options.size, realtime: options.realtime, loop: options.loop,
                       framesPerSecond: options.framesPerSecond, pixelFormat: options.pixelFormat,
                       controls: options.controls, logger: logger)
    }

    /// Reopens the camera when udev reports a video device (or at least once a
    /// second) until it is back, or a signal stops us.
    static func waitForCamera(_ options: RunOptions, logger: Logger) throws -> any FrameSource {
        let monitor = DeviceMonitor(subsystems: ["video4linux"])
        while !StopSignal.isRequested {
            if let monitor {
                for event in monitor.events(timeout: 1) where event.action == "add" {
                    logger.notice("udev: \(event.subsystem) add \(event.path ?? "?")")
                }
            } else {
                sleep(1)
            }
            if let camera = try? openCamera(options, logger: logger) { return camera }
        }
        throw VideoError(source: options.camera, reason: "stopped while waiting for the camera", hint: "")
    }

    static func trackLine(_ result: FrameResult, servo: SimulatedServo.Sample?) -> String {
        let time = String(format: "%6.2fs", result.timestamp)
        let target = result.target.map { box in
            let c = box.center
            return String(format: "face at (%3.0f,%3.0f)", c.x, c.y)
        } ?? "no face          "
        let sent = result.commands.map(\.description).joined(separator: " ")
        let servoText = servo.map { " servo pan \($0.pan)" + ($0.isScanning ? " (scanning)" : "") } ?? ""
        return "\(time)  \(target)  sent \(sent.padding(toLength: 10, withPad: " ", startingAt: 0))\(servoText)"
    }
}

/// Prints the HUD on stderr: rewritten in place on a terminal, one line per
/// change otherwise (logs stay readable).
final class StatusPrinter {
    private let enabled: Bool
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastHUD = ""
    private var rate = FrameRateMeter()

    init(enabled: Bool) { self.enabled = enabled }

    func update(hud: String, serial: String) {
        guard enabled else { return }
        let fps = rate.tick()
        if isTerminal {
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + StatusLine.line(hud: hud, framesPerSecond: fps, serial: serial)).utf8))
        } else if hud != lastHUD {
            FileHandle.standardError.write(Data((StatusLine.line(hud: hud, framesPerSecond: fps, serial: serial) + "\n").utf8))
        }
        lastHUD = hud
    }

    func finish() {
        if enabled && isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
