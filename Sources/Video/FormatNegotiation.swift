import FoundationEssentials
import Imaging
import TextOutput

/// A pixel format a camera offers, with the frame sizes it offers it in.
public struct CameraFormat: Sendable, Equatable {
    /// The V4L2 fourcc, e.g. `GREY`, `YUYV`.
    public var fourcc: String
    /// True when libv4l converts to it from the device's own format.
    public var emulated: Bool
    public var sizes: FrameSizes

    public init(fourcc: String, emulated: Bool = false, sizes: FrameSizes) {
        self.fourcc = fourcc
        self.emulated = emulated
        self.sizes = sizes
    }
}

/// The sizes of one format, as `VIDIOC_ENUM_FRAMESIZES` answers.
public enum FrameSizes: Sendable, Equatable {
    case discrete([FrameSize])
    case stepwise(min: FrameSize, max: FrameSize, step: FrameSize)
}

/// What to ask the camera for.
public struct FormatChoice: Sendable, Equatable {
    public var fourcc: String
    public var size: FrameSize

    public init(fourcc: String, size: FrameSize) {
        self.fourcc = fourcc
        self.size = size
    }
}

/// Picks the format and size to capture in (pure, so it is tested over
/// recorded device answers).
///
/// - Formats: for the cascades luma is all detection needs, so `GREY` first,
///   then `YUYV` (luma is every other byte), then YUV 4:2:0 (`YU12`/`YV12`/
///   `NV12`: the Y plane comes first), which libv4l produces from MJPEG and
///   most others. For the networks, trained on colour, the colour formats
///   come first and `GREY` last. A device's own format wins over one libv4l
///   emulates.
/// - Size: the supported size nearest the requested one (by area, then by
///   width); 640x480 when nothing is requested.
public enum FormatNegotiation {
    public static let preferredFourccs = ["GREY", "YUYV", "YU12", "YV12", "NV12"]
    /// The same formats when the colour matters.
    public static let colourFourccs = ["YUYV", "YU12", "YV12", "NV12", "GREY"]
    public static let defaultSize = FrameSize(width: 640, height: 480)

    public static func choose(from formats: [CameraFormat], requested: FrameSize?, colour: Bool = false) -> FormatChoice? {
        let target = requested ?? defaultSize
        let order = colour ? colourFourccs : preferredFourccs
        let usable = formats.filter { order.contains($0.fourcc) }
        let best = usable.min { a, b in
            if a.emulated != b.emulated { return !a.emulated }
            return order.firstIndex(of: a.fourcc)! < order.firstIndex(of: b.fourcc)!
        }
        guard let best, let size = nearest(to: target, in: best.sizes) else { return nil }
        return FormatChoice(fourcc: best.fourcc, size: size)
    }

    /// The size in `sizes` nearest `target`.
    public static func nearest(to target: FrameSize, in sizes: FrameSizes) -> FrameSize? {
        switch sizes {
        case .discrete(let list):
            return list.min { a, b in
                let da = abs(a.width * a.height - target.width * target.height), db = abs(b.width * b.height - target.width * target.height)
                return da != db ? da < db : abs(a.width - target.width) < abs(b.width - target.width)
            }
        case .stepwise(let low, let high, let step):
            func fit(_ value: Int, _ low: Int, _ high: Int, _ step: Int) -> Int {
                let clamped = min(max(value, low), high)
                return step > 1 ? low + (clamped - low) / step * step : clamped
            }
            return FrameSize(
                width: fit(target.width, low.width, high.width, step.width),
                height: fit(target.height, low.height, high.height, step.height))
        }
    }
}

extension String {
    /// A V4L2 fourcc code as text, e.g. `0x56595559` → `YUYV`. The
    /// big-endian variant of a format (bit 31, `V4L2_PIX_FMT_FLAG_BE`) reads
    /// `Y16-BE` (v4l2-ctl writes `Y16 -BE`); any other byte that is not printable
    /// ASCII shows as `?`.
    public init(fourcc: UInt32) {
        let bigEndian = fourcc & 0x8000_0000 != 0
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: (fourcc & 0x7FFF_FFFF) >> ($0 * 8)) }
        let text = String(bytes.map { (0x20..<0x7F).contains($0) ? Character(Unicode.Scalar($0)) : "?" })
        self = text.trimmed() + (bigEndian ? "-BE" : "")
    }
}

extension UInt32 {
    /// A fourcc from its four characters.
    public init(fourcc text: String) {
        let bytes = Array(text.utf8.prefix(4)) + Array(repeating: 0x20, count: Swift.max(0, 4 - text.utf8.count))
        self = bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << ($1.offset * 8) }
    }
}
