import Imaging

/// How the camera's picture is turned before anything reads it: a camera
/// mounted upside down (`--rotate 180`) or one that shows the room mirrored
/// (`--mirror`). `--invert-x`/`--invert-y` reverse the servos instead.
public struct FrameOrientation: Sendable, Equatable {
    public var upsideDown = false
    public var mirrored = false

    public init(upsideDown: Bool = false, mirrored: Bool = false) {
        self.upsideDown = upsideDown
        self.mirrored = mirrored
    }

    public var isUpright: Bool { !upsideDown && !mirrored }

    /// `pixels`, `width` wide, turned: a half turn reverses the whole array,
    /// a mirror each row; both reverse the order of the rows only.
    func turned(_ pixels: inout [UInt8], width: Int) {
        guard width > 0 else { return }
        if upsideDown { pixels.reverse() }
        if mirrored {
            pixels.withUnsafeMutableBufferPointer { buffer in
                for start in stride(from: 0, to: buffer.count - width + 1, by: width) { buffer[start..<start + width].reverse() }
            }
        }
    }

    /// The frame turned, its colour with it.
    public func turned(_ frame: Frame) -> Frame {
        guard !isUpright else { return frame }
        var frame = frame
        turned(&frame.image.pixels, width: frame.image.width)
        if var planes = frame.chroma {
            turned(&planes.u, width: planes.width)
            turned(&planes.v, width: planes.width)
            frame.chroma = planes
        }
        return frame
    }
}

/// A source whose frames come turned by `orientation`; everything else is the source's.
public final class OrientedFrames: FrameSource {
    private let source: any FrameSource
    public let orientation: FrameOrientation

    public init(_ source: any FrameSource, _ orientation: FrameOrientation) {
        self.source = source
        self.orientation = orientation
    }

    public var width: Int { source.width }
    public var height: Int { source.height }
    public var framesPerSecond: Double { source.framesPerSecond }
    public var name: String { source.name }
    public var hasColour: Bool { source.hasColour }
    public var comesBack: Bool { source.comesBack }

    public var keepsColour: Bool {
        get { source.keepsColour }
        set { source.keepsColour = newValue }
    }

    public func nextFrame() throws(VideoError) -> Frame? { try source.nextFrame().map(orientation.turned) }

    public func close() { source.close() }
}
