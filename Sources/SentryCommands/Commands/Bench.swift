import Benchmarking
import ArgumentParser
import Detectors
import FoundationEssentials
import Imaging
import SentryApp

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

    @Flag(help: "With the face mesh on the followed face (--expressions), and its two networks against LiteRT's.")
    var expressions = false

    @Flag(help: "Also time dlib's face recognition network against dlib's own C++ (tools/dlib_reference.py).")
    var recognition = false

    @OptionGroup var detection: DetectionOptions

    @OptionGroup var capture: CameraOptions

    func validate() throws {
        guard (1...100_000).contains(frames) else { throw ValidationError("--frames \(frames) must be between 1 and 100000") }
    }

    var detectorOptions: DetectorOptions {
        var options = detection.options
        options.expressions = expressions
        return options
    }

    func run() throws {
        let tools = tools ?? (FileManager.default.fileExists(atPath: "tools/opencv_reference.py") ? "tools" : nil)
        try failingCleanly {
            try Benchmarking.Bench.run(
                camera: camera, size: capture.frameSize ?? FrameSize(width: 640, height: 480), maxFrames: frames,
                detector: detectorOptions, tools: tools, profile: profile)
            if recognition { try Benchmarking.Bench.recognitionReport(tools: tools, profile: profile) }
        }
    }
}
