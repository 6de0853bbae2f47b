import FaceDetection
import Geometry
import Imaging

/// `--expressions`: BlazeFace over the whole frame at `--detect-fps`, and the
/// face mesh on the followed face on every frame, each crop taken from the
/// points of the frame before (MediaPipe's face-mesh graph). The mesh is what
/// follows the face between full passes, in place of `ScheduledDetector`'s
/// neighbourhood model: a face in view needs a detection pass only when the
/// mesh's presence score says it lost it.
///
/// The followed face is the largest of the last full pass, as the tracker's
/// target usually is; its box is the bounds of its mesh on every frame (never
/// the detector's on one frame and the mesh's on the next, which would make a
/// still face's aim jump at each full pass). The other faces of the last full
/// pass are reported where they were, with their scores.
public final class MeshFollowingDetector: FaceDetector {
    public let fullFrame: BlazeFaceDetector
    public let mesh: FaceMesh
    /// Seconds of video between full-frame passes.
    public let interval: Double
    /// Seconds of video between runs of the mesh (`--expressions-fps`): the mesh and
    /// the two iris networks cost about three BlazeFace passes, so at 30 fps they run
    /// on every other frame by default.
    public let meshInterval: Double
    /// What ran on the last frame: `.neighbourhood` is the mesh alone.
    public private(set) var lastPass = ScheduledDetector.Pass.full
    public private(set) var lastScores: [Float] = []
    /// The followed face's points with its box (the last of the faces reported).
    public var lastLandmarks: LandmarkedFace? { followedBox.map { LandmarkedFace(box: $0, landmarks: points) } }
    /// The followed face's box as reported; nil when no face is followed or its box left the frame.
    private var followedBox: Box?

    /// The followed face's points on the last frame (its box is the last of the
    /// faces reported); nil when no face is followed. Valid until the next frame.
    public var landmarks: FaceLandmarks? { followsFace ? points : nil }

    private var points = FaceLandmarks(points: [SIMD3<Float>](repeating: .zero, count: FaceLandmarks.count))
    private var followsFace = false
    /// The crop for the next frame, from this frame's points or a new detection.
    private var region: FaceRegion?
    private var nextFullPass = -Double.infinity
    private var nextMesh = -Double.infinity
    private var lastTime = -Double.infinity
    private var detections: [ScoredFace] = []
    private var others: [Box] = []
    private var otherScores: [Float] = []
    /// The face this frame's full pass chose to follow, if it ran and found one; reported
    /// as the detector's box when the mesh will not take it (a profile).
    private var detected: ScoredFace?

    /// Full passes with `fullFrame` at `rate` per second of video, the mesh at
    /// `meshRate` (nil: every frame, for both).
    public init(fullFrame: BlazeFaceDetector, mesh: FaceMesh, rate: Double?, meshRate: Double? = nil) {
        self.fullFrame = fullFrame
        self.mesh = mesh
        interval = rate.map { 1 / $0 } ?? 0
        meshInterval = meshRate.map { 1 / $0 } ?? 0
    }

    public var readsColour: Bool { fullFrame.readsColour }

    /// Without a time every frame is a full pass.
    public func detectFaces(in image: GrayImage, into faces: inout [Box]) {
        (nextFullPass, nextMesh) = (-.infinity, -.infinity)
        detectFaces(in: image, at: lastTime, into: &faces)
    }

    public func detectFaces(in image: GrayImage, at time: Double, into faces: inout [Box]) {
        detectFaces(in: image, colour: nil, at: time, into: &faces)
    }

    public func detectFaces(in image: GrayImage, colour: ChromaPlanes?, at time: Double, into faces: inout [Box]) {
        // Video time that goes back (a file played again) starts the schedules over.
        if time < lastTime { (nextFullPass, nextMesh) = (-.infinity, -.infinity) }
        lastTime = time
        lastPass = .none
        detected = nil
        let followed = region
        if time >= nextFullPass { fullPass(in: image, colour: colour, at: time) }
        // Between the mesh's turns the face it follows holds its box and points (a new face starts it at once).
        guard time >= nextMesh || region != followed || !followsFace else { return report(in: image, into: &faces) }
        nextMesh = Self.next(nextMesh, at: time, every: meshInterval)
        let tried = region
        followsFace = tried.map { mesh.landmarks(in: image, colour: colour, region: $0, into: &points) } ?? false
        if !followsFace, tried != nil {
            // The mesh lost the face: start again from a detection (a pass now if this frame had none).
            if lastPass != .full { fullPass(in: image, colour: colour, at: time) }
            if let detected, FaceMesh.region(for: detected) != tried {
                followsFace = mesh.landmarks(in: image, colour: colour, region: FaceMesh.region(for: detected), into: &points)
            }
        }
        if lastPass == .none, followsFace { lastPass = .neighbourhood }
        region = followsFace ? FaceMesh.region(following: points) : nil
        report(in: image, into: &faces)
    }

    /// The next turn of a schedule `every` seconds: on the beat while it keeps up, else from `time`.
    private static func next(_ due: Double, at time: Double, every interval: Double) -> Double {
        time >= due && time < due + interval ? due + interval : time + interval
    }

    /// Finds every face and picks the largest to follow; the mesh keeps its own
    /// crop when that is the face it already follows.
    private func fullPass(in image: GrayImage, colour: ChromaPlanes?, at time: Double) {
        fullFrame.detect(in: image, colour: colour, into: &detections)
        // A pass out of turn (the mesh lost its face) leaves the schedule on its beat.
        if time >= nextFullPass { nextFullPass = Self.next(nextFullPass, at: time, every: interval) }
        lastPass = .full
        others.removeAll(keepingCapacity: true)
        otherScores.removeAll(keepingCapacity: true)
        guard let largest = detections.indices.max(by: { detections[$0].width * detections[$0].height < detections[$1].width * detections[$1].height })
        else { return }  // Nobody found: the mesh, if it follows a face, still decides.
        for index in detections.indices where index != largest {
            others.append(detections[index].box)
            otherScores.append(detections[index].score)
        }
        let face = detections[largest]
        detected = face
        if let current = region, Self.contains(face, current.center) { return }
        region = FaceMesh.region(for: face)
    }

    private static func contains(_ face: ScoredFace, _ point: SIMD2<Float>) -> Bool {
        point.x >= face.x && point.x <= face.x + face.width && point.y >= face.y && point.y <= face.y + face.height
    }

    /// The other faces, then the followed one.
    private func report(in image: GrayImage, into faces: inout [Box]) {
        faces.removeAll(keepingCapacity: true)
        faces.append(contentsOf: others)
        lastScores.removeAll(keepingCapacity: true)
        lastScores.append(contentsOf: otherScores)
        followedBox = nil
        if followsFace {
            // Within the frame: a face half out of view has points beyond its edge.
            let (low, high) = points.bounds
            let size = SIMD2(Float(image.width), Float(image.height))
            let left = low.clamped(lowerBound: .zero, upperBound: size).rounded(.toNearestOrAwayFromZero)
            let right = high.clamped(lowerBound: .zero, upperBound: size).rounded(.toNearestOrAwayFromZero)
            guard right.x > left.x, right.y > left.y else { return }
            let box = Box(x: Int(left.x), y: Int(left.y), width: Int(right.x - left.x), height: Int(right.y - left.y))
            faces.append(box)
            lastScores.append(mesh.presence)
            followedBox = box
        } else if let detected {
            faces.append(detected.box)
            lastScores.append(detected.score)
        }
    }
}
