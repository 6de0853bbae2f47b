// Counts heap allocations per frame in the per-frame paths, once warm:
// luma extraction from a V4L2 YUYV buffer, and each face detector.
//
//   LD_PRELOAD=.build/debug/libMallocInterposerSwift.so count-allocations CLIP
//
// Refuses to run without the preload (counts would read 0 and mean nothing);
// the `control` line allocates once per frame to show the counter is live.
// Prints one line per path:
//   <path> <allocations> allocations in <frames> frames
import CoreAffinity
import Expressions
import FaceDetection
import FaceMesh
import Foundation
import Geometry
import Imaging
import MallocInterposerSwift
import ModelFiles
import Video

@main
struct CountAllocations {
    static func main() throws {
        guard CommandLine.arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: count-allocations CLIP\n".utf8))
            exit(64)
        }
        guard ProcessInfo.processInfo.environment["LD_PRELOAD"]?.contains("MallocInterposer") == true else {
            FileHandle.standardError.write(Data("count-allocations: run with LD_PRELOAD=…/libMallocInterposerSwift.so\n".utf8))
            exit(2)
        }
        let source = try FileFrameSource(path: CommandLine.arguments[1], size: FrameSize(width: 640, height: 480))
        var frames: [GrayImage] = []
        while frames.count < 20, let frame = try source.nextFrame() { frames.append(frame.image) }
        source.close()

        // A control that must allocate once per frame: proves the counter is live.
        report(
            "control",
            count(frames.count) { index in
                let copy = Array(frames[index].pixels.prefix(64 + index))
                precondition(!copy.isEmpty)
            }, frames.count)

        // Luma from YUYV driver buffers into one reused image.
        // Chroma that varies across the frame, so that the colour path converts real colour.
        let buffers = frames.map { image in
            var buffer = [UInt8](repeating: 128, count: 2 * image.pixels.count)
            for (index, luma) in image.pixels.enumerated() {
                buffer[2 * index] = luma
                buffer[2 * index + 1] = UInt8(truncatingIfNeeded: 96 + index % 640 / 10)
            }
            return buffer
        }
        var luma = GrayImage(width: 640, height: 480)
        report(
            "luma-yuyv",
            count(frames.count) { index in
                _ = buffers[index].withUnsafeBytes { LumaExtraction.extract(fourcc: "YUYV", from: $0, bytesPerLine: 1280, into: &luma) }
            }, frames.count)

        // What the worker pool does when the caller has changed cores (rare on an idle
        // machine, so a run alone would not show it): the helpers' allowed cores.
        func moveCores(_ index: Int) {
            guard var cores = CoreSet.allowed() else { return }
            cores.remove(index % 2)
            precondition(!cores.isEmpty || index % 2 == 0)
            cores.insert(index % 2)
            cores.allow()
        }
        for index in frames.indices { moveCores(index) }
        report("core-set", count(frames.count, moveCores), frames.count)

        // A colour camera's frame: luma and chroma from a YUYV buffer into reused planes, then
        // BlazeFace in colour (the letterbox converting to RGB row by row).
        // With --detect-fps 8 too: the neighbourhood looks letterbox a region that moves, in colour.
        if let full = ModelLocator.file(.blazeFaceFullRange), let short = ModelLocator.file(.blazeFaceShortRange) {
            var chroma = ChromaPlanes(layout: .halfWidth, lumaWidth: 640, lumaHeight: 480)
            var faces: [Box] = []
            let scheduled = ScheduledDetector(
                fullFrame: try BlazeFaceDetector(modelPath: full), neighbourhood: try BlazeFaceDetector(modelPath: short), rate: 8)
            for (name, detector) in [
                ("blazeface-colour-yuyv", try BlazeFaceDetector(modelPath: full) as any FaceDetector),
                ("blazeface-colour-detect-fps-8", scheduled),
            ] {
                // Video time goes on from pass to pass (the schedule is not the pass before's again).
                func colourFrame(_ index: Int, pass: Int) {
                    buffers[index].withUnsafeBytes { buffer in
                        _ = LumaExtraction.extract(fourcc: "YUYV", from: buffer, bytesPerLine: 1280, into: &luma)
                        _ = chroma.extract(fourcc: "YUYV", from: buffer, bytesPerLine: 1280, lumaHeight: 480)
                    }
                    detector.detectFaces(in: luma, colour: chroma, at: Double(pass * frames.count + index) / 30, into: &faces)
                }
                for pass in 0..<2 { for index in frames.indices { colourFrame(index, pass: pass) } }
                report(name, count(frames.count) { colourFrame($0, pass: 2) }, frames.count)
            }
        }

        var detectors: [(String, any FaceDetector)] = []
        for variant in BlazeFaceDetector.Variant.allCases {
            if let path = ModelLocator.file(ModelFile.blazeFace(fullRange: variant == .fullRange)) { detectors.append((variant.rawValue, try BlazeFaceDetector(modelPath: path))) }
        }
        if let path = ModelLocator.file(.blazeFaceFullRange) {
            detectors.append(("blazeface-2-threads", try BlazeFaceDetector(modelPath: path, threads: 2)))
        }
        let cascade = try HaarCascade(xml: FileContents.read(CascadeFile.haarFrontalFace, atMost: 64 << 20))
        detectors.append(("haar", CascadeDetector(cascade: cascade)))
        detectors.append(("haar-2-threads", CascadeDetector(cascade: cascade, threads: 2)))
        detectors.append(("lbp", CascadeDetector(cascade: try HaarCascade(xml: FileContents.read(CascadeFile.lbpFrontalFace, atMost: 64 << 20)))))
        // --detect-fps 8 on frames 1/30 s apart: full passes and neighbourhood looks.
        if let full = ModelLocator.file(.blazeFaceFullRange), let short = ModelLocator.file(.blazeFaceShortRange) {
            detectors.append(
                (
                    "blazeface-detect-fps-8",
                    ScheduledDetector(
                        fullFrame: try BlazeFaceDetector(modelPath: full),
                        neighbourhood: try BlazeFaceDetector(modelPath: short), rate: 8)
                ))
        }
        detectors.append(
            (
                "haar-detect-fps-8",
                ScheduledDetector(
                    fullFrame: CascadeDetector(cascade: cascade),
                    neighbourhood: CascadeDetector(cascade: cascade), rate: 8)
            ))
        // --expressions: full passes at 8 a second, the face mesh on every frame.
        if let full = ModelLocator.file(.blazeFaceFullRange) {
            detectors.append(("mesh-detect-fps-8", MeshFollowingDetector(fullFrame: try BlazeFaceDetector(modelPath: full), mesh: try FaceMesh(), rate: 8)))
        }
        for (name, detector) in detectors {
            var faces: [Box] = []
            // Warm: two passes over the same frames let every buffer reach its size: a
            // region-sized buffer grows until the largest neighbourhood has been seen (video
            // time goes on, so each pass is not the one before's schedule again).
            for pass in 0..<2 {
                for (index, image) in frames.enumerated() {
                    detector.detectFaces(in: image, at: Double(pass * frames.count + index) / 30, into: &faces)
                }
            }
            report(
                name,
                count(frames.count) { index in
                    detector.detectFaces(in: frames[index], at: Double(2 * frames.count + index) / 30, into: &faces)
                }, frames.count)
            if let mesh = detector as? MeshFollowingDetector { try countExpressions(mesh, frames) }
        }
    }

    /// What the run's expression reader computes from the mesh each frame: scores, states, pose, gaze.
    static func countExpressions(_ mesh: MeshFollowingDetector, _ frames: [GrayImage]) throws {
        var faces: [Box] = [], states = ExpressionStates(), kept: Set<ExpressionState> = []
        var time = 3.0
        func read(_ image: GrayImage) {
            time += 1 / 30
            mesh.detectFaces(in: image, at: time, into: &faces)
            guard let points = mesh.landmarks else { return }
            let reading = FaceReading(points, in: image)
            kept = states.update(reading.scores, at: time)
            precondition(reading.pose.yaw.isFinite && reading.gaze.left.x.isFinite)
        }
        for image in frames + frames { read(image) }
        report("mesh-expressions", count(frames.count) { read(frames[$0]) }, frames.count)
        precondition(kept.count < 6)
    }

    /// Allocations made by `body` over `frames` calls.
    static func count(_ frames: Int, _ body: (Int) -> Void) -> Int {
        MallocInterposerSwift.initialize()
        MallocInterposerSwift.hook()
        for index in 0..<frames { body(index) }
        MallocInterposerSwift.unhook()
        return MallocInterposerSwift.getStatistics().mallocCount
    }

    static func report(_ name: String, _ allocations: Int, _ frames: Int) {
        print("\(name) \(allocations) allocations in \(frames) frames")
    }
}
