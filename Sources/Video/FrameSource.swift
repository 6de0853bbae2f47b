import FaceDetection

/// One captured frame: the luma, which is all detection needs, and its
/// colour when the source was asked to keep it (`keepsColour`).
public struct Frame: Sendable {
    public var image: GrayImage
    /// The frame's colour, from a colour camera asked to keep it.
    public var chroma: ChromaPlanes?
    /// Seconds since the source started (the stream's clock for files, the
    /// driver's clock for cameras).
    public var timestamp: Double
    /// 0 for the first frame.
    public var index: Int

    public init(image: GrayImage, timestamp: Double, index: Int, chroma: ChromaPlanes? = nil) {
        self.image = image
        self.chroma = chroma
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
    /// Also deliver each frame's colour (`Frame.chroma`), where the source
    /// has any; off by default, since detection never needs it.
    var keepsColour: Bool { get set }
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

extension FrameSource {
    /// Gray sources (files, the virtual camera) have no colour to keep.
    public var keepsColour: Bool {
        get { false }
        set {}
    }
}
