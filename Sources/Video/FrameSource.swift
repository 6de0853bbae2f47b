import Imaging

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
    /// has any.
    var keepsColour: Bool { get set }
    /// Whether its frames have colour to deliver (a camera in a colour format,
    /// a file or photo opened in colour).
    var hasColour: Bool { get }
    /// Stops capture and releases the device or process. Idempotent.
    func close()
    /// A camera that may come back after it failed (a device node unplugged, its driver
    /// reloaded): its errors are waited out by reopening it; a file's end the run.
    var comesBack: Bool { get }
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
    /// Gray sources (the virtual camera) have no colour to keep.
    public var keepsColour: Bool {
        get { false }
        set {}
    }

    public var hasColour: Bool { false }

    public var comesBack: Bool { false }
}
