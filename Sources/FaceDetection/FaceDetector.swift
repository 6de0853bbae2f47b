import Geometry
import Imaging

/// Anything that finds faces in a frame: in its luma, and in its colour where
/// the detector can use it (the networks, trained on colour).
///
/// Detectors keep scratch buffers between calls, so one instance serves one
/// thread; create one per thread.
public protocol FaceDetector: AnyObject {
    /// Replaces the contents of `faces` with the faces in `image`, as boxes in
    /// the image's pixels, in no particular order. The array's storage is
    /// reused, so a caller that keeps it lets a detector run without allocating.
    func detectFaces(in image: GrayImage, into faces: inout [Box])

    /// The same for a frame of a video taken at `time` (seconds): detectors
    /// that do not look at every frame in full (`ScheduledDetector`) use it.
    func detectFaces(in image: GrayImage, at time: Double, into faces: inout [Box])

    /// The same with the frame's colour (nil for a gray frame): BlazeFace finds
    /// small faces in colour it misses in gray; the cascades read only the luma.
    func detectFaces(in image: GrayImage, colour: ChromaPlanes?, at time: Double, into faces: inout [Box])

    /// The detector's confidence (0...1) in each face of the last call, in
    /// the order of its boxes; empty when it has no scores (cascades).
    var lastScores: [Float] { get }

    /// The face whose landmarks the last call found, with its box as it is
    /// among the faces (the face mesh's); nil for detectors without landmarks.
    var lastLandmarks: LandmarkedFace? { get }

    /// Whether a frame's colour changes what it finds: the camera is then asked
    /// for a colour format and the sources keep the colour.
    var readsColour: Bool { get }
}

extension FaceDetector {
    public func detectFaces(in image: GrayImage, at time: Double, into faces: inout [Box]) {
        detectFaces(in: image, into: &faces)
    }

    public func detectFaces(in image: GrayImage, colour: ChromaPlanes?, at time: Double, into faces: inout [Box]) {
        detectFaces(in: image, at: time, into: &faces)
    }

    public var lastScores: [Float] { [] }

    public var lastLandmarks: LandmarkedFace? { nil }

    public var readsColour: Bool { false }

    /// The faces in `image` as a new array.
    public func detectFaces(in image: GrayImage) -> [Box] {
        var faces: [Box] = []
        detectFaces(in: image, into: &faces)
        return faces
    }
}

/// A detector that can look at a part of a frame only, for following a face
/// between full-frame passes.
public protocol RegionFaceDetector: FaceDetector {
    /// Replaces `faces` with the faces inside `region` of `image`, as boxes
    /// in the whole image's pixels.
    func detectFaces(in image: GrayImage, region: Box, into faces: inout [Box])

    /// The same with the frame's colour (nil for a gray frame).
    func detectFaces(in image: GrayImage, colour: ChromaPlanes?, region: Box, into faces: inout [Box])
}

extension RegionFaceDetector {
    public func detectFaces(in image: GrayImage, colour: ChromaPlanes?, region: Box, into faces: inout [Box]) {
        detectFaces(in: image, region: region, into: &faces)
    }
}

/// A face and its landmarks: the mesh's points paired with the box the
/// detector reported for them, so nobody has to guess which face they are.
public struct LandmarkedFace: Sendable, Equatable {
    public var box: Box
    public var landmarks: FaceLandmarks

    public init(box: Box, landmarks: FaceLandmarks) {
        self.box = box
        self.landmarks = landmarks
    }
}
