import Console
import Detectors
import Events
import Devices
import Expressions
import FaceDetection
import FoundationEssentials
import Glibc
import Hooks
import Imaging
import Logging
import Relay
import Serial
import ServoSim
import Tracking
import Turret
import TurretLinks
import TurretProtocol
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
    /// Where the board is after a replug gave it another name; set for `--serial auto`.
    public var findSerialPortAgain: (@Sendable () -> String?)?
    /// Play a file again and again.
    public var loop = false
    public var size: FrameSize?
    /// Camera frame rate and pixel format (`nil`: the camera's own / negotiated).
    public var framesPerSecond: Double?
    public var pixelFormat: String?
    public var controls = CameraControls()
    /// How the camera's picture is turned before detection (`--rotate 180`, `--mirror`).
    public var orientation = FrameOrientation()
    public var realtime = false
    /// Stop after this many frames (`nil`: at the end of the stream).
    public var maxFrames: Int?
    /// The simulated servo's speed (`--servo-speed`).
    public var servoSecondsPer60Degrees = ServoMotion.typicalSecondsPer60Degrees
    /// The virtual camera's true field of view (`--sim-fov`; `nil`: the
    /// tracker's `--fov`).
    public var virtualFieldOfView: Double?
    /// The virtual camera's sensor noise (`--sim-noise`, gray levels).
    public var virtualCameraNoise = 0.0
    public var detector = DetectorOptions()
    public var settings = PipelineSettings()
    public var onExit = ExitCommand.hold
    /// Commands run on events (`--on-event`, `--on-lock`, `--on-lost`).
    public var hooks = EventHookSettings()
    /// `--on-expression` (with `--expressions`).
    public var expressionRules: [ExpressionRule] = []
    /// `--known`: who the target is.
    public var recognition: RecognitionSettings?
    /// Print the HUD line on stderr.
    public var showStatus = true
    /// Print one line per frame that wrote commands, on stdout.
    public var printTrack = false
    /// The web console (`--web`), off when `nil`.
    public var web: WebOptions?
    /// Where events are kept with their pictures (`--events`); none when `nil`.
    public var events: EventSettings?
    /// `--mqtt`: the broker, and the name there; `nil` without.
    public var mqtt: MQTTSettings?
    /// Something may change the run while it goes on: the console or MQTT.
    public var hasControlSource: Bool { web != nil || mqtt != nil }
    /// The settings control sources (the console) may change while it runs.
    public var liveSettings: any LiveSettingsEditor = NoLiveSettings()
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
        /// The newest bytes it received (all of a short run's), and all of them counted.
        public var receivedBytes: [UInt8]
        public var servoTally: SimulatedServo.Tally
        /// What became of the `--on-event` (`--on-lock`, `--on-lost`) runs.
        public var hooks: HookRunner.Counts?
    }

    /// Wires a run: the detector, the simulated servo (`--serial sim`), the
    /// link, the camera, the pipeline, and the observers of the frame loop.
    public static func run(_ options: RunOptions, logger: Logger) throws -> Summary {
        StopSignal.install()
        // Everything started below is stopped by this one owner, the last started first, on every way out.
        let services = RunServices()
        defer { services.stopAll() }
        let (detector, detectorName) = try options.detector.makeDetector(logger: logger)
        let virtualScene = options.camera.hasPrefix(virtualCameraPrefix) ? String(options.camera.dropFirst(virtualCameraPrefix.count)) : nil
        let range = try RangeCameraName(parsing: options.camera)
        // A virtual camera's frames are on their own clock, and so is the simulated servo it rides on or aims with.
        let onFrameClock = virtualScene != nil || (range != nil && options.serial == simulatedSerialName)
        let simulator =
            options.serial == simulatedSerialName
            ? try SimulatedServo(secondsPer60Degrees: options.servoSecondsPer60Degrees, frameClock: onFrameClock) : nil
        if let simulator { services.started(stop: simulator.stop) }
        let link = try TurretConnection.open(options, simulator: simulator, logger: logger)
        services.started(stop: link.close)
        let source: any FrameSource
        var rangeDarts: RangeDarts?
        if let virtualScene, let simulator {
            source = try openVirtualCamera(scene: virtualScene, options, simulator: simulator, output: link.output)
        } else if let range {
            (source, rangeDarts) = try openRangeCamera(
                range, detector: try options.detector.makeDetector().detector, simulator: simulator, output: link.output, paced: options.realtime,
                lead: options.settings.lead)
        } else {
            source = try openCamera(options, colour: detector.readsColour, logger: logger)
        }
        logger.info(
            "camera \(source.name) \(source.width)x\(source.height) @ \(source.framesPerSecond) fps\(detector.readsColour ? (source.hasColour ? ", in colour" : ", gray") : ""); detector \(detectorName); serial \(options.serial) at \(options.baudRate) baud"
        )
        // A control source may turn the expressions on while sentry runs, so it always gets their hooks and logs.
        let expressions =
            options.detector.expressions || options.hasControlSource
            ? ExpressionWatcher(rules: options.expressionRules, hookTimeout: options.hooks.timeout, logger: logger) : nil
        if let expressions { services.started(stop: expressions.finish) }
        // The changes to the run that control sources (the console) submit, for the frame loop to apply.
        let changes = RunChanges()
        let liveSettings = LiveSettingsControl(editor: options.liveSettings, detector: options.detector, changes: changes, logger: logger)
        let eventStore = try options.events.map { try EventStore(directory: $0.directory, keep: $0.keep, maximumBytes: $0.maximumBytes) }
        // One session for every control source: what each may ask, checked in one place.
        let session = LiveControlSession(
            settings: liveSettings, changes: changes, configPath: options.web?.configPath, keysGivenAsFlags: options.web?.keysGivenAsFlags ?? [],
            stateDirectory: options.web?.stateDirectory)
        let web = try options.web.map {
            try WebConsole(options: $0, session: session, detectorName: detectorName, history: eventStore, darts: rangeDarts, logger: logger)
        }
        if let web { services.started(stop: web.close) }
        let camera = RecoveringCamera(source, path: options.camera, keepsColour: web != nil || detector.readsColour, logger: logger) {
            () throws(VideoError) in try openCamera(options, colour: detector.readsColour, logger: logger)
        }
        services.started(stop: camera.close)

        var settings = options.settings
        if onFrameClock { settings.turretClock = .frames }
        let recognition = options.recognition.map { FaceIdentification($0, logger: logger) }
        if let recognition { services.started(stop: recognition.stop) }
        let pipeline = Pipeline(
            detector: detector, detectorName: detectorName, output: link.output, settings: settings, expressionRules: options.expressionRules,
            identities: recognition)
        let hotPlug = simulator == nil ? link.serialPort.flatMap { SerialHotPlug(port: $0, logger: logger) } : nil
        if let hotPlug { services.started(stop: hotPlug.stop) }
        let lockEvents = LockEvents(logger: logger)
        let eventHooks = EventHooks(settings: options.hooks, logger: logger)
        if let eventHooks { services.started { eventHooks.runner.finish() } }
        let mqtt = options.mqtt.map { MQTTBridge(settings: $0, session: session, encodesFaces: eventStore == nil, logger: logger) }
        if let mqtt { services.started(stop: mqtt.stop) }
        let eventLog = eventStore.map { store in
            EventLog(
                writer: EventWriter(store: store, logger: logger) { [hub = web?.hub, face = mqtt?.faceSink] record, jpeg in
                    hub?.kept(record)
                    face?(jpeg)
                })
        }
        // Started after MQTT and the console, which it publishes to: stopped (its queue written) before them.
        if let eventLog { services.started(stop: eventLog.writer.finish) }
        let recorder = options.keepResults ? ResultRecorder() : nil
        var observers: [any FrameObserver] = []
        if let web { observers.append(web) }
        if let recorder { observers.append(recorder) }
        if let expressions { observers.append(expressions) }
        if let recognition { observers.append(recognition) }
        observers.append(lockEvents)
        if let eventHooks { observers.append(eventHooks) }
        if let eventLog { observers.append(eventLog) }
        if let mqtt { observers.append(mqtt) }
        if options.showStatus { observers.append(StatusPrinter(output: link.output)) }
        if options.printTrack { observers.append(TrackTable(output: link.output, simulator: simulator)) }

        let frames = try FrameLoop(pipeline: pipeline, camera: camera, observers: observers, changes: changes, logger: logger)
            .run(maxFrames: options.maxFrames, onExit: options.onExit)
        simulator?.waitForBytes(link.output.bytesWritten, timeout: 0.5)
        // Stopped before the summary reads them: the hooks' counts are final, the events written.
        services.stopAll()
        if StopSignal.isRequested { logger.info("stopped by signal") }
        return Summary(
            frames: frames, bytesWritten: link.output.bytesWritten, results: recorder?.results ?? [],
            servoTrack: simulator?.track ?? [], receivedBytes: simulator?.receivedBytes ?? [], servoTally: simulator?.tally ?? .init(),
            hooks: eventHooks?.runner.counts)
    }

    /// `--camera sim:IMAGE`: frames rendered where the simulated servo
    /// points, on the frame clock. Before each frame the simulator takes in
    /// every byte written so far, so the loop's lag is the servo's, never
    /// the machine's.
    static func openVirtualCamera(
        scene: String, _ options: RunOptions, simulator: SimulatedServo,
        output: any CommandOutput
    ) throws(VideoError) -> any FrameSource {
        try VirtualCamera(
            scenePath: scene, size: options.size ?? FrameSize(width: 640, height: 480),
            fieldOfView: options.virtualFieldOfView ?? options.settings.tracking.fieldOfView,
            framesPerSecond: options.framesPerSecond ?? 30, realtime: options.realtime,
            sensorNoise: options.virtualCameraNoise
        ) { time in
            simulator.waitForBytes(output.bytesWritten, timeout: 0.5)
            let state = simulator.advance(to: time)
            return (state.panPosition, state.tiltPosition)
        }
    }

    /// A frame source for `--camera`: a V4L2 device node, or a file; its frames turned by `orientation`.
    public static func openCamera(
        _ path: String, size: FrameSize?, realtime: Bool, loop: Bool = false,
        framesPerSecond: Double? = nil, pixelFormat: String? = nil, colour: Bool = false,
        controls: CameraControls = CameraControls(), orientation: FrameOrientation = FrameOrientation(), logger: Logger? = nil
    ) throws(VideoError) -> any FrameSource {
        let source: any FrameSource
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFCHR {
            let camera = try V4L2Camera(
                path: path, size: size, framesPerSecond: framesPerSecond, fourcc: pixelFormat, colour: colour,
                controls: controls, isCancelled: { StopSignal.isRequested })
            for note in camera.notes { logger?.notice("\(note)") }
            source = camera
        } else {
            source = try FileFrameSource.open(path: path, size: size, realtime: realtime, loop: loop, colour: colour, isCancelled: { StopSignal.isRequested })
        }
        return orientation.isUpright ? source : OrientedFrames(source, orientation)
    }

    /// The camera `options` describe; `colour`: in a colour format where it has one.
    static func openCamera(_ options: RunOptions, colour: Bool, logger: Logger) throws(VideoError) -> any FrameSource {
        try openCamera(
            options.camera, size: options.size, realtime: options.realtime, loop: options.loop,
            framesPerSecond: options.framesPerSecond, pixelFormat: options.pixelFormat, colour: colour,
            controls: options.controls, orientation: options.orientation, logger: logger)
    }
}
