import ChildProcesses
import SystemPackage
import CoreAffinity
import Detectors
import FaceDetection
import FaceMesh
import FoundationEssentials
import Glibc
import Geometry
import Imaging
import Letterboxing
import MonotonicTime
import ProcessorFeatures
import SentryApp
import Serial
import ServoSim
import TFLite
import TurretLinks
import Video
import TextOutput

/// `sentry bench`: per-stage time per frame on a clip, and the same frames
/// through OpenCV's `detectMultiScale` for a ratio measured in the same run.
public enum Bench {
    public struct Stats: Sendable, CustomStringConvertible {
        public var median: Double
        public var p99: Double
        /// The fastest: on a host whose speed swings with its neighbours, the one figure of a
        /// run that does not depend on how long the slow spells lasted.
        public var fastest: Double

        /// Median, 99th percentile (nearest rank) and minimum of `seconds`, in milliseconds.
        public init(seconds: [Double]) {
            let sorted = seconds.sorted().map { $0 * 1000 }
            median = Self.median(ofSorted: sorted)
            fastest = sorted.first ?? 0
            p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((0.99 * Double(sorted.count - 1)).rounded()))]
        }

        /// The middle value of `values` (the mean of the two middle ones for an even count), 0 if none.
        static func median(_ values: [Double]) -> Double { median(ofSorted: values.sorted()) }

        private static func median(ofSorted sorted: [Double]) -> Double {
            sorted.isEmpty ? 0 : (sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2)
        }

        public var description: String { String(printf: "median %8.3f ms   p99 %8.3f ms", median, p99) }
    }

    /// The processor and the kernels the networks run on it: a figure means
    /// little without them (the same build runs 1.2-1.6x apart on two x86 families).
    static var hostLine: String {
        guard let processor = Processor.current else { return "unknown (/proc/cpuinfo cannot be read)" }
        return "\(processor.summary); kernels \(processor.kernels?.rawValue ?? "none (the Haar cascade only)")"
    }

    /// The camera's per-frame work after DQBUF, over recorded buffers: the
    /// frames laid out as a YUYV driver buffer, luma extracted in place.
    static func captureTimes(_ frames: [Frame]) -> [Double] {
        guard let first = frames.first else { return [] }
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
        return times
    }

    /// Runs the benchmark and prints a report on stdout. `tools` is the directory with
    /// the reference scripts (OpenCV for cascades, LiteRT for BlazeFace); nil skips them.
    /// With `profile`, also where BlazeFace's network spends its time, by operator.
    public static func run(
        camera: String, size: FrameSize?, maxFrames: Int, detector options: DetectorOptions,
        tools: String?, profile: Bool = false
    ) throws {
        let loadStart = monotonicSeconds()
        let (detector, name) = try options.makeDetector()
        let loadSeconds = monotonicSeconds() - loadStart
        let source = try Runner.openCamera(camera, size: size, realtime: false, colour: detector.readsColour)
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
        let scheduled = detector as? ScheduledDetector
        let meshFollowing = detector as? MeshFollowingDetector
        let blazeFace = (scheduled?.fullFrame ?? meshFollowing?.fullFrame ?? detector) as? BlazeFaceDetector
        var results: [FrameResult] = []
        var processTimes: [Double] = []
        var networkTimes: [Double] = []
        var letterboxTimes: [Double] = [], boxDecodeTimes: [Double] = []
        var passes: [ScheduledDetector.Pass: Int] = [:]
        for frame in frames {
            let start = monotonicSeconds()
            results.append(try pipeline.process(frame))
            processTimes.append(monotonicSeconds() - start)
            let pass = scheduled?.lastPass ?? meshFollowing?.lastPass
            if let pass { passes[pass, default: 0] += 1 }
            if let blazeFace, pass ?? .full == .full {
                networkTimes.append(blazeFace.lastNetworkSeconds)
                letterboxTimes.append(blazeFace.lastLetterboxSeconds)
                boxDecodeTimes.append(blazeFace.lastDecodeSeconds)
            }
        }
        let captureTimes = captureTimes(frames)

        let threads = options.threads
        let threadLabel = "\(threads) thread\(threads == 1 ? "" : "s")"
        print("sentry bench: \(frames.count) frames of \(first.image.width)x\(first.image.height) from \(camera), detector \(name), \(threadLabel)")
        print("  host          \(hostLine)")
        print(String(printf: "  load          %8.3f ms (the detector: model or cascade read and prepared)", loadSeconds * 1000))
        print("  decode        \(Stats(seconds: decodeTimes))")
        print("  capture       \(Stats(seconds: captureTimes)) (V4L2 path: luma from YUYV buffers of these frames)")
        let detect = Stats(seconds: results.map(\.detectSeconds))
        print("  detect        \(detect)")
        if !networkTimes.isEmpty {
            print("  network       \(Stats(seconds: networkTimes)) (the interpreter, in the frame loop)")
            print("  letterbox     \(Stats(seconds: letterboxTimes)) (frame to input tensor\(first.chroma == nil ? "" : ", in colour"))")
            if first.chroma != nil, let blazeFace { colourLetterboxReport(frames, size: blazeFace.variant.inputSize) }
            print("  boxes         \(Stats(seconds: boxDecodeTimes)) (anchors decoded, weighted NMS)")
        }
        print("  select+map    \(Stats(seconds: results.map(\.selectAndMapSeconds)))")
        print("  write         \(Stats(seconds: results.map(\.writeSeconds)))")
        print("  latency       \(Stats(seconds: zip(captureTimes, processTimes).map(+))) (capture to the command written to the pty)")
        if let interval = scheduled?.interval ?? meshFollowing?.interval {
            print(
                String(
                    printf:
                        "  passes        %d full, %d \(meshFollowing == nil ? "neighbourhood" : "mesh alone"), %d none (--detect-fps %g; network times: full passes)",
                    passes[.full] ?? 0, passes[.neighbourhood] ?? 0, passes[.none] ?? 0, 1 / interval))
        }
        print("  frames with a face: \(results.filter { !$0.faces.isEmpty }.count)")
        if let blazeFace {
            print(String(printf: "  detector memory: %.1f MB (weights and activations)", Double(blazeFace.memoryBytes) / 1e6))
            if profile { printProfile(blazeFace.stepTimings(on: first.image, runs: frames.count)) }
            if threads > 1, let one = try? BlazeFaceDetector(modelPath: blazeFace.modelPath, minScore: blazeFace.minScore) {
                let cost = threadCost(one: one, more: blazeFace, image: first.image)
                let ratios = cost.roundRatios
                print(
                    String(
                        printf:
                            "  CPU per detection at 30 fps: %.3f ms on \(threadLabel), %.3f ms on one: %.2fx (\(costRounds) rounds: median %.2fx, %.2f-%.2fx; the two detectors in turns frame by frame)",
                        cost.moreThreads * 1000, cost.oneThread * 1000, cost.ratio, Stats.median(ratios), ratios.min() ?? 0, ratios.max() ?? 0))
            }
        }

        if let meshFollowing {
            cropReport(meshFollowing, frame: frames.last)
            meshReport(meshFollowing.mesh, tools: tools, profile: profile)
        }
        guard let tools else {
            print("  reference: skipped (tools/ not found; run from the repository or pass --tools)")
            return
        }
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("sentry-bench-\(getpid()).gray")
        defer { try? FileManager.default.removeItem(at: raw) }
        try Data(frames.flatMap(\.image.pixels)).write(to: raw)
        let frameArguments = [
            "bench", "--frames", raw.path, "--width", "\(first.image.width)", "--height", "\(first.image.height)",
            "--threads", "\(threads)",
        ]
        let reference: (label: String, arguments: [String], overlap: Double)
        if let blazeFace {
            reference = (
                "LiteRT",
                ["\(tools)/blazeface_reference.py"] + frameArguments
                    + ["--model", blazeFace.variant == .fullRange ? "full" : "short"], 0.9
            )
        } else {
            let p = options.cascadeParameters
            reference = (
                "OpenCV",
                ["\(tools)/opencv_reference.py"] + frameArguments
                    + [
                        "--cascade", options.cascadeFile, "--scale-factor", "\(p.scaleFactor)",
                        "--min-neighbors", "\(p.minNeighbors)", "--min-size", "\(p.minSize)",
                    ], 0.8
            )
        }
        guard let referenceRun = ReferenceProcess(reference.arguments + (blazeFace == nil ? [] : ["--turns"])),
            let line = referenceRun.readLine(), let result = try? JSONDecoder().decode(ReferenceResult.self, from: line)
        else {
            print("  \(reference.label) reference: failed (run `make setup` to install the pip references)")
            return
        }
        // The networks alone, back to back, in turns (see takeTurns).
        var turns = Turns()
        if let blazeFace {
            let coresBefore = threads == 1 ? Self.shareCore(with: referenceRun.processIdentifier) : nil
            defer { coresBefore?.allow() }
            turns = Self.takeTurns(with: referenceRun, request: "run \(Self.runsPerTurn)") {
                blazeFace.backToBackNetworkSeconds(on: first.image, runs: Self.runsPerTurn)
            }
        }
        guard referenceRun.finish() else {
            print("  \(reference.label) reference: failed (run `make setup` to install the pip references)")
            return
        }
        var matched = 0, total = 0
        for (frameResult, boxes) in zip(results, result.boxes) {
            for b in boxes {
                total += 1
                let box = Box(x: b[0], y: b[1], width: b[2], height: b[3])
                if frameResult.faces.contains(where: { $0.intersectionOverUnion(box) >= reference.overlap }) { matched += 1 }
            }
        }
        print(String(printf: "  \(reference.label) detect median %8.3f ms   p99 %8.3f ms   (same frames, \(threadLabel))", result.median_ms, result.p99_ms))
        if !turns.ours.isEmpty, !turns.theirs.isEmpty {
            let (sentry, other) = (Stats(seconds: turns.ours), Stats(seconds: turns.theirs))
            print("  network alone \(sentry) (back to back on one frame, \(Self.turns) turns of \(Self.runsPerTurn) with the reference)")
            print("  \(reference.label) network \(other) (its interpreter alone, in the same turns)")
            print(String(printf: "  ratio sentry/\(reference.label) network: median %.2fx   p99 %.2fx", sentry.median / other.median, sentry.p99 / other.p99))
            // Each turn's ratio is taken a few milliseconds apart: drift between turns stays out of it.
            print(String(printf: "  ratio turn by turn: median %.2fx (of \(turns.ratios.count) turns' median ratios)", Stats.median(turns.ratios)))
        }
        print(
            String(printf: "  ratio sentry/\(reference.label) detect: median %.2fx   p99 %.2fx", detect.median / result.median_ms, detect.p99 / result.p99_ms))
        if meshFollowing != nil {
            // The followed face's box is its mesh's bounds, drawn unlike a detector's box.
            print(
                "  \(reference.label) boxes matched (IoU >= \(reference.overlap)): \(matched)/\(total); with --expressions the followed face's box is its mesh's bounds"
            )
        } else if scheduled == nil {
            print(
                "  \(reference.label) boxes matched by sentry (IoU >= \(reference.overlap)): \(matched)/\(total); sentry boxes: \(results.map(\.faces.count).reduce(0, +))"
            )
        } else {
            // Between passes the boxes are the short-range model's, shaped differently: the aims are what agree (tests).
            print("  \(reference.label) boxes matched (IoU >= \(reference.overlap)): \(matched)/\(total), full passes' boxes only agree at that overlap")
        }
    }

    /// A network's seconds per run, ours and the reference's, and each turn's ratio of medians.
    struct Turns {
        var ours: [Double] = [], theirs: [Double] = [], ratios: [Double] = []
    }

    /// `turns` turns of `mine` (our network, `runsPerTurn` runs back to back) and the
    /// reference answering `request` with as many: this machine's speed drifts by tens
    /// of percent within seconds, and turns of a fraction of a second keep that drift
    /// out of each turn's ratio. Stops early when the reference stops answering.
    static func takeTurns(with reference: ReferenceProcess, request: String, _ mine: () -> [Double]) -> Turns {
        var turns = Turns()
        for _ in 0..<Self.turns {
            let ours = mine()
            guard let answer = reference.request(request), let turn = try? JSONDecoder().decode(ReferenceTurn.self, from: answer) else { break }
            let theirs = turn.network_ms.map { $0 / 1000 }
            turns.ours += ours
            turns.theirs += theirs
            turns.ratios.append(Stats.median(ours) / Stats.median(theirs))
        }
        return turns
    }

    /// The network's time by operator: each step's fastest run, summed per operator.
    static func printProfile(_ timings: [Interpreter.StepTiming]) {
        let total = timings.map(\.seconds).reduce(0, +)
        print(String(printf: "  network by operator (each step's fastest run, summed: %.3f ms):", total * 1000))
        let byOperation = Dictionary(grouping: timings, by: { (timing: Interpreter.StepTiming) in timing.operation })
        for (name, steps) in byOperation.sorted(by: { $0.value.map(\.seconds).reduce(0, +) > $1.value.map(\.seconds).reduce(0, +) }) {
            let seconds = steps.map(\.seconds).reduce(0, +)
            let work = steps.map(\.work).reduce(0, +)
            // Multiply-adds, two floating-point operations each: the convolutions' rate against the CPU's peak.
            let rate = name.contains("CONV") ? String(printf: "%6.1f GFLOP/s", 2 * Double(work) / seconds / 1e9) : ""
            print(
                "    " + name.padded(to: 26)
                    + String(printf: " %8.3f ms %5.1f%%  %3d ", seconds * 1000, 100 * seconds / total, steps.count)
                    + (steps.count == 1 ? "step   " : "steps  ") + rate)
        }
    }

    private struct ReferenceResult: Decodable {
        var median_ms: Double
        var p99_ms: Double
        var boxes: [[[Int]]]
    }

    private struct ReferenceTurn: Decodable {
        var network_ms: [Double]
    }

    /// Turns of the networks alone, and runs in each (see `ReferenceProcess`).
    static let turns = 20, runsPerTurn = 10

    /// Puts this thread and process `other` on the core this thread runs on, for
    /// the one-thread turns; returns the cores this thread had, to put back (nil if
    /// the kernel would not say). This machine's two cores run at different speeds
    /// for seconds at a time: with each network on its own core, the one-thread
    /// ratio measured 0.69-0.99x from run to run; on one core, 0.79-0.82x on the
    /// quicker core and 0.93-0.99x on the slower (eight runs each).
    static func shareCore(with other: pid_t) -> CoreSet? {
        guard let core = CoreSet.current, let before = CoreSet.allowed() else { return nil }
        var one = CoreSet()
        one.insert(core)
        one.allow()
        one.allow(thread: other)
        return before
    }

    /// A reference script run with python3, read a line at a time: its result,
    /// then (BlazeFace's, with --turns) one answer per request.
    final class ReferenceProcess {
        private let process: ChildProcess
        /// Our ends of its standard input and output.
        private let input: FileDescriptor, output: FileDescriptor
        private var buffered: [UInt8] = []

        init?(_ arguments: [String]) {
            guard let toChild = try? FileDescriptor.pipe(options: .closeOnExec) else { return nil }
            guard let fromChild = try? FileDescriptor.pipe(options: .closeOnExec) else {
                [toChild.readEnd, toChild.writeEnd].forEach { try? $0.close() }
                return nil
            }
            guard let process = try? ChildProcess("python3", arguments: arguments, input: toChild.readEnd, output: .descriptor(fromChild.writeEnd))
            else {
                [toChild.writeEnd, fromChild.readEnd].forEach { try? $0.close() }
                return nil
            }
            (self.process, input, output) = (process, toChild.writeEnd, fromChild.readEnd)
        }

        /// The next line it prints; nil at its end.
        func readLine() -> Data? {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                if let end = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                    defer { buffered.removeSubrange(...end) }
                    return Data(buffered[..<end])
                }
                guard let count = try? chunk.withUnsafeMutableBytes({ try output.read(into: $0) }), count > 0 else { return nil }
                buffered += chunk[..<count]
            }
        }

        /// The script's process id.
        var processIdentifier: pid_t { process.processIdentifier }

        func request(_ line: String) -> Data? {
            guard (try? input.writeAll(Array((line + "\n").utf8))) != nil else { return nil }
            return readLine()
        }

        /// Ends its input, waits for it, and says whether it succeeded.
        func finish() -> Bool {
            try? input.close()
            while readLine() != nil {}
            try? output.close()
            return process.wait()?.succeeded == true
        }
    }
}
