// swift-tools-version: 6.1
import PackageDescription

/// The face detector's hot loops are optimised even in debug builds so that
/// `swift test` runs the real detector on real frames in seconds.
let optimisedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "sentry",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "sentry", targets: ["sentry"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // Pure logic shared by the pipeline and the tests: no I/O at all.
        .target(name: "SentryCore"),
        // Pure-Swift face detection (OpenCV-format Haar cascades).
        .target(name: "FaceDetection", dependencies: ["SentryCore"], swiftSettings: optimisedInDebug),
        // C libraries from Debian's -dev packages: libv4l-dev, libudev-dev.
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        // Frame sources: V4L2 cameras, and files decoded by an ffmpeg subprocess.
        .target(name: "Video", dependencies: ["FaceDetection", "CV4L2"]),
        // Cameras and serial ports on this machine (libudev).
        .target(name: "Devices", dependencies: ["Video", "CUdev"]),
        // termios serial ports and pseudo-terminals.
        .target(name: "Serial"),
        // The firmware's protocol state machine in Swift, attachable to a pty.
        .target(name: "ServoSim", dependencies: ["SentryCore", "Serial"]),
        // The pipeline: frames -> faces -> angles -> commands -> serial.
        .target(
            name: "SentryApp",
            dependencies: [
                "SentryCore", "FaceDetection", "Video", "Serial", "ServoSim", "Devices",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "sentry",
            dependencies: [
                "SentryApp", "ServoSim",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libFuzzer targets (`make fuzz`); in a normal build they replay a corpus.
        .target(name: "FuzzSupport", path: "Fuzz/Support"),
        .executableTarget(name: "fuzz-cascade", dependencies: ["FaceDetection", "FuzzSupport"], path: "Fuzz/Cascade"),
        .executableTarget(name: "fuzz-protocol", dependencies: ["SentryCore", "ServoSim", "FuzzSupport"], path: "Fuzz/Protocol"),
        .testTarget(name: "SentryCoreTests", dependencies: ["SentryCore"]),
        .testTarget(name: "VideoTests", dependencies: ["Video"]),
        .testTarget(name: "FaceDetectionTests", dependencies: ["FaceDetection", "Video", "SentryCore"]),
        .testTarget(name: "SerialTests", dependencies: ["Serial"]),
        .testTarget(name: "ServoSimTests", dependencies: ["ServoSim", "Serial", "SentryCore"]),
        .testTarget(name: "FirmwareTests", dependencies: ["ServoSim", "SentryCore", "Serial"]),
        .testTarget(name: "SentryAppTests", dependencies: ["SentryApp", "Devices", "SentryCore", "ServoSim", "Serial", "Video", "FaceDetection"]),
    ],
    swiftLanguageModes: [.v6]
)
