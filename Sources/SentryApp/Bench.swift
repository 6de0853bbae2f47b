import FaceDetection
import Foundation
import SentryCore
import Serial
import ServoSim
import Video

/// `sentry bench`: per-stage time per frame on a clip, and the same frames
/// through OpenCV's `detectMultiScale` for a ratio measured in the same run.
public enum Bench {
    public struct Stats: Sendable, CustomStringConvertible {
        public var median: Double
        public var p99: Double

        /// Median and 99th percentile (nearest rank) of `seconds`, in milliseconds.
        public init(seconds: [Double]) {
            let sorted = seconds.sorted().map { $0 * 1000 }
            median = sorted.isEmpty ? 0 : (sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2)
            p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((0.99 * Double(sorted.count - 1)).rounded()))]
        }

        public var description: String { String(format: "median %8.3f ms   p99 %8.3f ms", median, p99) }
    }

    /// The camera's per-frame work after DQBUF, over recorded buffers: the
    /// frames laid out as a YUYV driver buffer, luma extracted in place.
    static func captureStats(_ frames: [Frame]) -> Stats {
        guard let first = frames.first else { return Stats(seconds: []) }
        var image = GrayImage(width: first.image.width, height: first.image.height)
        let bytesPerLine = 2 * first.image.width
        let recorded: [[UInt8]] = frames.map { frame in
            var buffer = [UInt8](repeating: 128, count: 2 * frame.image.pixels.count)
            for (i, y) in frame.image.pixels.enumerated() { buffer[2 * i] = y }
            return buffer
        }
        var times: [Double] = []
        for buffer in recorded {
            let start = monotonicSeconds()
            _ = buffer.withUnsafeBytes { LumaExtraction.extract(fourcc: "YUYV", from: $0, bytesPerLine: bytesPerLine, into: &image) }
            times.append(monotonicSeconds() - start)
        }
        return Stats(seconds: times)
    }

    /// Runs the benchmark and prints a report on stdout.
    public static func run(camera: String, size: FrameSize?, maxFrames: Int, cascadePath: String,
                           parameters: CascadeParameters, threads: Int = 1, referenceScript: String?) throws {
        let detector = try Runner.makeDetector(cascadePath: cascadePath, parameters: parameters, threads: threads)
        let source = try Runner.openCamera(camera, size: size, realtime: false)
        defer { source.close() }
        var frames: [Frame] = []
        var decodeTimes: [Double] = []
        while frames.count < maxFrames {
            let start = monotonicSeconds()
            guard let frame = try source.nextFrame() else { break }
            decodeTimes.append(monotonicSeconds() - start)
            frames.append(frame)
        }
        guard let first = frames.first else { throw VideoError(source: camera, reason: "no frames", hint: "pass a video file") }

        // Write to a real serial port: the simulated servo's pseudo-terminal.
        let simulator = try SimulatedServo()
        defer { simulator.stop() }
        let link = try SerialCommandOutput(path: simulator.devicePath)
        defer { link.close() }
        let pipeline = Pipeline(detector: detector, output: link, settings: PipelineSettings())
        var results: [FrameResult] = []
        for frame in frames { results.append(try pipeline.process(frame)) }

        print("sentry bench: \(frames.count) frames of \(first.image.width)x\(first.image.height) from \(camera), \(threads) detector thread\(threads == 1 ? "" : "s")")
        print("  decode        \(Stats(seconds: decodeTimes))")
        print("  capture       \(captureStats(frames)) (V4L2 path: luma from YUYV buffers of these frames)")
        let detect = Stats(seconds: results.map(\.detectSeconds))
        print("  detect        \(detect)")
        print("  select+map    \(Stats(seconds: results.map(\.selectAndMapSeconds)))")
        print("  write         \(Stats(seconds: results.map(\.writeSeconds)))")
        print("  frames with a face: \(results.filter { !$0.faces.isEmpty }.count)")

        guard let script = referenceScript else {
            print("  OpenCV reference: skipped (tools/opencv_reference.py not found; run from the repository or pass --reference)")
            return
        }
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("sentry-bench-\(getpid()).gray")
        defer { try? FileManager.default.removeItem(at: raw) }
        try Data(frames.flatMap(\.image.pixels)).write(to: raw)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, "bench", "--frames", raw.path, "--width", "\(first.image.width)",
                             "--height", "\(first.image.height)", "--cascade", cascadePath,
                             "--scale-factor", "\(parameters.scaleFactor)", "--min-neighbors", "\(parameters.minNeighbors)",
                             "--min-size", "\(parameters.minSize)", "--threads", "\(threads)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        struct Reference: Decodable {
            var median_ms: Double
            var p99_ms: Double
            var boxes: [[[Int]]]
        }
        guard process.terminationStatus == 0, let reference = try? JSONDecoder().decode(Reference.self, from: output) else {
            print("  OpenCV reference: failed (run `make setup` to install opencv-python-headless)")
            return
        }
        var matched = 0, total = 0
        for (result, boxes) in zip(results, reference.boxes) {
            for b in boxes {
                total += 1
                let box = Box(x: b[0], y: b[1], width: b[2], height: b[3])
                if result.faces.contains(where: { $0.intersectionOverUnion(box) >= 0.8 }) { matched += 1 }
            }
        }
        print(String(format: "  OpenCV detect median %8.3f ms   p99 %8.3f ms   (detectMultiScale, same cascade, parameters, frames, \(threads) thread\(threads == 1 ? "" : "s"))", reference.median_ms, reference.p99_ms))
        print(String(format: "  ratio sentry/OpenCV: median %.2fx   p99 %.2fx", detect.median / reference.median_ms, detect.p99 / reference.p99_ms))
        print("  OpenCV boxes matched by sentry (IoU >= 0.8): \(matched)/\(total); sentry boxes: \(results.map(\.faces.count).reduce(0, +))")
    }
}
