import SentryCore

/// Anything that finds faces in a grayscale frame.
///
/// Detectors keep scratch buffers between calls, so one instance serves one
/// thread; create one per thread.
public protocol FaceDetector: AnyObject {
    /// The faces in `image`, as boxes in the image's pixels, in no particular order.
    func detectFaces(in image: GrayImage) -> [Box]
}
