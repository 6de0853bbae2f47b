import FaceDetection

/// One captured frame: luma only, which is all detection needs.
public struct Frame: Sendable {
    public var image: GrayImage
    /// Seconds since the source started (the stream's clock for files, the
    /// driver's clock for cameras).
    public var timestamp: Double
    /// 0 for the first frame.
    public var index: Int

    public init(image: GrayImage, timestamp: Double, index: Int) {
        self.image = image
        self.timestamp = timestamp
        self.index = index
    }
}

/// Anything that produces frames: a video file, a still image, a camera.
public protocol FrameSource: AnyObject {
    /// Frame size in pixels.
    var width: Int { get }
    var height: Int { get }
    /// Nominal frames per second (0 when unknown).
    var framesPerSecond: Double { get }
    /// A short human-readable name for status lines.
    var name: String { get }
    /// The next frame, `nil` at the end of the stream.
    func nextFrame() throws(VideoError) -> Frame?
    /// Stops capture and releases the device or process. Idempotent.
    func close()
}

/// Why frames could not be read. `description` is one line that names the
/// source and says what to do.
public struct VideoError: Error, CustomStringConvertible, Equatable {
    public var source: String
    public var reason: String
    public var hint: String

    public init(source: String, reason: String, hint: String) {
        self.source = source
        self.reason = reason
        self.hint = hint
    }

    public var description: String { "camera \(source): \(reason); \(hint)" }
}
