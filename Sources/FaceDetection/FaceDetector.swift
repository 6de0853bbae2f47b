import SentryCore

/// Anything that finds faces in a grayscale frame.
///
/// Detectors keep scratch buffers between calls, so one instance serves one
/// thread; create one per thread.
public protocol FaceDetector: AnyObject {
    /// Replaces the contents of `faces` with the faces in `image`, as boxes in
    /// the image's pixels, in no particular order. The array's storage is
    /// reused, so a caller that keeps it lets a detector run without allocating.
    func detectFaces(in image: GrayImage, into faces: inout [Box])
}

extension FaceDetector {
    /// The faces in `image` as a new array.
    public func detectFaces(in image: GrayImage) -> [Box] {
        var faces: [Box] = []
        detectFaces(in: image, into: &faces)
        return faces
    }
}
