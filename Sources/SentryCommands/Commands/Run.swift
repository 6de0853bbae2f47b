import ArgumentParser
import Detectors
import Devices
import FoundationEssentials
import Logging
import PhotoFaces
import FaceRecognition
import SentryApp
import ServoSim
import TextOutput
import Tracking
import TurretProtocol
import Video

/// `sentry run` (the default command): track faces and drive the turret.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Track faces and drive the turret (the default command).")

    @Option(
        help:
            "A camera (/dev/video0, or 'auto' for the only one), a video file or an image; 'sim:IMAGE' (with --serial sim) is a camera on the simulated turret looking at IMAGE; 'range:SCENARIO[+SECONDS]:PHOTO' the shooting range's people walking before a fixed camera, their walks begun SECONDS in (sentry range)."
    )
    var camera: String

    @OptionGroup var link: SerialLinkOptions

    @Option(
        help:
            "Settings file (TOML, keys are the long flag names; flags win). Default: $XDG_CONFIG_HOME/sentry/sentry.toml, else /etc/sentry/sentry.toml, if there."
    )
    var config: String?

    @OptionGroup var trackingOptions: TrackingOptions

    @OptionGroup var lockFire: LockFireOptions

    @OptionGroup var eventOptions: EventOptions
    @OptionGroup var mqttOptions: MQTTOptions

    @Option(parsing: .unconditional, help: "Stop after this many frames.")
    var frames: Int?

    @Option(parsing: .unconditional, help: "The virtual camera's true field of view (default: --fov), to try a wrong --fov.")
    var simFov: Double?

    @Option(
        parsing: .unconditional,
        help: "The virtual camera's sensor noise: a standard deviation in gray levels added to every pixel, new each frame (a real camera's grain; 0: none).")
    var simNoise: Double = 0

    @Flag(inversion: .prefixedNo, help: "Play files at their own frame rate instead of as fast as possible (and the range on the simulated servo at the wall clock's pace, to watch it in the console).")
    var realtime = false

    @Flag(inversion: .prefixedNo, help: "Play the file again and again (for soak runs and demos).")
    var loop = false

    @Flag(inversion: .prefixedNo, help: "Print one line per frame that sent commands (time, face, command, servo).")
    var track = false

    @Flag(inversion: .prefixedNo, help: "No status line.")
    var quiet = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    @OptionGroup var detection: DetectionOptions

    @OptionGroup var faces: ExpressionOptions

    @OptionGroup var capture: CameraOptions

    @OptionGroup var webConsole: WebConsoleOptions

    func validate() throws {
        guard !camera.isEmpty else { throw ValidationError("--camera needs a file path") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \(logLevel) is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if camera.hasPrefix(rangeCameraPrefix) {
            do { _ = try RangeCameraName(parsing: camera) } catch { throw ValidationError("--camera \(camera) \(error.reason): \(error.hint)") }
        }
        if camera.hasPrefix(virtualCameraPrefix) {
            guard camera.count > virtualCameraPrefix.count else { throw ValidationError("--camera sim: needs an image, e.g. --camera sim:room.png") }
            guard link.serial == simulatedSerialName else {
                throw ValidationError("--camera \(camera) rides on the simulated turret: use it with --serial sim")
            }
        }
        if let fps = capture.fps, !(camera.hasPrefix("/dev/") || camera == "auto" || camera.hasPrefix(virtualCameraPrefix)) {
            throw ValidationError(
                "--fps \(String(printf: "%g", fps)) sets a camera's rate; the file \(camera) plays at its own (add --realtime to play it at that pace)")
        }
        if let simFov { try checkRange(simFov, "sim-fov", 1...179, " degrees") }
        try checkRange(simNoise, "sim-noise", 0...64, " gray levels (a webcam's grain is 2 to 8)")
        if let frames, frames < 1 { throw ValidationError("--frames \(frames) must be at least 1") }
        if lockFire.fire, !trackingOptions.tilt, !lockFire.panOnlyBelowHeads {
            throw ValidationError(
                "--fire without --tilt cannot aim the fire point below faces: add --tilt for a pan/tilt turret, or --pan-only-below-heads if the blaster has no tilt servo and sits below head height"
            )
        }
        if lockFire.panOnlyBelowHeads, !lockFire.fire {
            throw ValidationError("--pan-only-below-heads describes an armed blaster: use it with --fire")
        }
        if faces.enabled, let kind = detection.options.kind, kind == .haar || kind == .lbp {
            throw ValidationError(
                "\(faces.reason) reads the face's expression, which needs the BlazeFace detector (its eye points place the face mesh); drop --detector \(kind.rawValue)")
        }
    }

    var pipelineSettings: PipelineSettings {
        var settings = PipelineSettings(tracking: trackingOptions.settings, deadband: trackingOptions.deadband)
        settings.lockAfter = lockFire.lockAfter
        settings.fire = lockFire.fireSettings
        settings.lead = lockFire.leadSettings
        settings.leadsUnarmed = trackingOptions.lead
        settings.spare = faces.spareState
        settings.sparedPeople = faces.sparedPeople
        settings.targetsStrangers = faces.target == .unknown
        settings.firePointBelow = lockFire.fireBelow
        settings.panOnlyBelowHeads = lockFire.panOnlyBelowHeads
        settings.trim = trackingOptions.trim
        // Armed, the turret aims where it fires: off the face (SPEC §8). Unarmed, at its centre (SPEC §2).
        if settings.fire != nil { settings.tracking.aimBelow = lockFire.fireBelow }
        return settings
    }

    /// The detector's options, with the mesh when the expressions are on.
    var detectorOptions: DetectorOptions {
        var options = detection.options
        options.expressions = faces.enabled
        options.expressionRate = faces.expressionsFps.perSecond
        return options
    }

    /// The run these flags describe, on `camera` and `serial` (`auto` already looked up).
    func runOptions(camera: String, serial: String) throws -> RunOptions {
        var options = RunOptions(camera: camera, serial: serial)
        options.baudRate = link.baud
        options.bootWait = link.bootWait
        options.onExit = link.onExit
        options.size = capture.frameSize
        options.framesPerSecond = capture.fps
        options.pixelFormat = capture.pixelFormat
        options.controls = capture.controls
        options.orientation = capture.orientation
        options.realtime = realtime
        options.loop = loop
        options.detector = detectorOptions
        options.expressionRules = (try? faces.rules) ?? []
        if let known = faces.known { options.recognition = try failingCleanly { try recognition(known) } }
        options.settings = pipelineSettings
        options.web = webOptions
        options.mqtt = try failingCleanly { try mqttOptions.settings(version: BuildInfo.version) }
        // The live settings, as the run's own options: what the console and MQTT change.
        if options.hasControlSource { options.liveSettings = LiveRunSettings(self, household: options.recognition?.people.names ?? []) }
        options.hooks = lockFire.hooks
        options.events = eventOptions.settings
        options.maxFrames = frames
        options.servoSecondsPer60Degrees = trackingOptions.servoSpeed
        options.virtualFieldOfView = simFov
        options.virtualCameraNoise = simNoise
        options.showStatus = !quiet
        options.printTrack = track
        if link.serial == "auto" { options.findSerialPortAgain = DeviceList.finder(for: serial) }
        return options
    }

    /// `--known`: the household enrolled from its folder (photos read again only when changed), and dlib's model.
    func recognition(_ known: String) throws -> RecognitionSettings {
        let (folder, embedder) = try Recognising.household(detector: detection.options, known: known)
        guard !folder.names.isEmpty else {
            throw KnownFolder.Problem(directory: known, reason: "no photo in it has exactly one face; sentry known \(known) says why for each")
        }
        if let refusal = Self.refusal(of: faces.sparedPeople, household: folder.names, in: known) { throw ValidationError(refusal) }
        return RecognitionSettings(people: folder.people, embedder: embedder)
    }

    /// Why `--spare NAME` names nobody enrolled in `household`, or nil when it is fine.
    static func refusal(of spared: SparedPeople?, household: [String], in directory: String) -> String? {
        guard case .person(let name) = spared, !household.contains(name) else { return nil }
        return "--spare \(name): nobody called \(name) is enrolled in \(directory) (enrolled: \(household.joined(separator: ", "))); give an enrolled name, or add \(directory)/\(name)/ with their photos"
    }

    func run() throws {
        let logger = makeLogger(level: logLevel)
        let camera = try failingCleanly { self.camera == "auto" ? try DeviceList.onlyCamera() : self.camera }
        let serial = try failingCleanly { link.serial == "auto" ? try DeviceList.onlySerialPort() : link.serial }
        let options = try runOptions(camera: camera, serial: serial)
        if lockFire.fire {
            let height = lockFire.panOnlyBelowHeads ? "level from below head height (--pan-only-below-heads)" : "\(String(printf: "%g", lockFire.fireBelow)) face heights below the face's centre"
            StandardStream.writeError(
                "sentry: ARMED (--fire on the command line): shoots at locked targets, \(height), never with the fire point on a face; Ctrl-C stops it and the turret holds still\n"
            )
        }
        let summary = try failingCleanly { try Runner.run(options, logger: logger) }
        if serial == simulatedSerialName {
            let tally = summary.servoTally
            let final = summary.servoTrack.last
            let shots = lockFire.fire ? ", \(final?.shots ?? 0) shots fired" : ""
            print(
                "simulated servo: \(summary.frames) frames, \(tally.commands) commands received (\(tally.lost) × L), final pan \(final?.pan ?? 90)\(final?.isScanning == true ? " (scanning)" : "")\(shots)"
            )
        }
    }
}
