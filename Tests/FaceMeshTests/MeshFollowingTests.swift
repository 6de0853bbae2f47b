import FaceDetection
import FaceMesh
import Foundation
import Geometry
import Imaging
import ModelFiles
import TestClips
import Testing
import Video

@Suite("--expressions: the mesh follows the face between full passes")
struct MeshFollowingTests {
    /// The astronaut's face still at (320, 240), in view 0–1.5 s and 2.5–4 s, at 10 fps.
    static func frames() throws -> [Frame] {
        let source = try FileFrameSource(path: Clips.comesAndGoes, size: FrameSize(width: 640, height: 480))
        defer { source.close() }
        var frames: [Frame] = []
        while let frame = try source.nextFrame() { frames.append(frame) }
        return frames
    }

    static func inView(_ time: Double) -> Bool { time < 1.55 || (time > 2.45 && time < 4.05) }

    @Test("a face in view needs only the scheduled full passes, an empty room too; the mesh reports the face on every frame, still to a pixel")
    func followsBetweenPasses() throws {
        let full = try #require(ModelLocator.file(.blazeFaceFullRange))
        let detector = MeshFollowingDetector(fullFrame: try BlazeFaceDetector(modelPath: full), mesh: try FaceMesh(), rate: 2)
        var faces: [Box] = []
        var centres: [SIMD2<Double>] = [], unscheduled = 0, meshOnly = 0
        var firstShowing: [FaceLandmarks] = []
        let frames = try Self.frames()
        let detected = try #require(try BlazeFaceDetector(modelPath: full).detectFaces(in: frames[0].image).first)
        for frame in frames {
            detector.detectFaces(in: frame.image, at: frame.timestamp, into: &faces)
            let scheduled = frame.index % 5 == 0
            if Self.inView(frame.timestamp) {
                #expect(faces.count == 1 && detector.landmarks != nil, "frame \(frame.index): \(faces)")
                // The points come with the box reported for them, so nobody pairs them by position.
                #expect(detector.lastLandmarks?.box == faces.last && detector.lastLandmarks?.landmarks == detector.landmarks)
                if let box = faces.last { centres.append(SIMD2(box.center.x, box.center.y)) }
                if frame.timestamp < 1.45, let points = detector.landmarks { firstShowing.append(points) }
                if detector.lastPass == .full, !scheduled { unscheduled += 1 }
                if detector.lastPass == .neighbourhood { meshOnly += 1 }
            } else if !Self.inView(frame.timestamp - 0.1) {
                // Nobody in view, and nobody lost just now: only the scheduled passes look.
                #expect(faces.isEmpty && detector.landmarks == nil && detector.lastLandmarks == nil, "frame \(frame.index): \(faces)")
                #expect(detector.lastPass == (scheduled ? .full : .none), "frame \(frame.index)")
            }
        }
        let mean = centres.reduce(.zero, +) / Double(centres.count)
        let spread = centres.map { (($0 - mean) * ($0 - mean)).sum().squareRoot() }.max() ?? 0
        // Jitter: each point's distance from its own mean over the still face's frames, RMS over points and frames.
        var squares = 0.0
        for index in 0..<FaceLandmarks.count {
            let positions = firstShowing.map { $0.position(index) }
            let centre = positions.reduce(.zero, +) / Float(positions.count)
            squares += positions.map { Double((($0 - centre) * ($0 - centre)).sum()) }.reduce(0, +)
        }
        let jitter = (squares / Double(FaceLandmarks.count * firstShowing.count)).squareRoot()
        print(
            "mesh following: \(meshOnly) frames by the mesh alone, \(unscheduled) unscheduled full passes; box centre \(mean), within \(spread) px; point jitter \(String(format: "%.2f", jitter)) px RMS over \(firstShowing.count) frames"
        )
        #expect(jitter < 1)
        #expect(unscheduled == 0)
        #expect(meshOnly >= 20)
        // The mesh's box (brow to chin) is centred near BlazeFace's.
        let offset = mean - SIMD2(detected.center.x, detected.center.y)
        #expect((offset * offset).sum().squareRoot() < 0.2 * Double(detected.width), "BlazeFace's \(detected)")
        #expect(spread < 1.5)
    }

    @Test("--expressions-fps 5 on a 10 fps clip: the mesh runs on every other frame, the face keeps its box in between")
    func meshRate() throws {
        let full = try #require(ModelLocator.file(.blazeFaceFullRange))
        let detector = MeshFollowingDetector(fullFrame: try BlazeFaceDetector(modelPath: full), mesh: try FaceMesh(), rate: 1, meshRate: 5)
        var faces: [Box] = [], held = 0, inView = 0
        for frame in try Self.frames() where Self.inView(frame.timestamp) && frame.timestamp < 1.45 {
            let before = faces
            detector.detectFaces(in: frame.image, at: frame.timestamp, into: &faces)
            inView += 1
            #expect(faces.count == 1, "frame \(frame.index)")
            if detector.lastPass == .none {
                held += 1
                #expect(faces == before, "frame \(frame.index): a held box moved")
            }
        }
        #expect(held == inView / 2, "\(held) of \(inView) frames held")
    }

    @Test("when the face leaves, the mesh lets it go on the next frame")
    func letsGo() throws {
        let full = try #require(ModelLocator.file(.blazeFaceFullRange))
        let detector = MeshFollowingDetector(fullFrame: try BlazeFaceDetector(modelPath: full), mesh: try FaceMesh(), rate: 0.5)
        var faces: [Box] = []
        var lastSeen = 0.0
        for frame in try Self.frames() where frame.timestamp < 2.4 {
            detector.detectFaces(in: frame.image, at: frame.timestamp, into: &faces)
            if !faces.isEmpty { lastSeen = frame.timestamp }
        }
        #expect(abs(lastSeen - 1.5) < 0.05, "last seen at \(lastSeen) s")
    }
}
