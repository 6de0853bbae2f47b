/// The colour of a frame (Cb and Cr), kept beside its luma when someone
/// wants to see the picture in colour (the web console): detection never
/// reads it.
public struct ChromaPlanes: Sendable, Equatable {
    /// How the planes are sampled against the luma.
    public enum Layout: Sendable, Equatable {
        /// Half width, full height (4:2:2, from YUYV).
        case halfWidth
        /// Half width, half height (4:2:0, from YU12/YV12).
        case halfBoth
    }

    public let layout: Layout
    public let width: Int
    public let height: Int
    public var u: [UInt8]
    public var v: [UInt8]

    /// Neutral (gray) planes for a `lumaWidth` x `lumaHeight` frame.
    public init(layout: Layout, lumaWidth: Int, lumaHeight: Int) {
        self.layout = layout
        width = (lumaWidth + 1) / 2
        height = layout == .halfWidth ? lumaHeight : (lumaHeight + 1) / 2
        u = [UInt8](repeating: 128, count: width * height)
        v = u
    }

    /// The layout a camera format carries, or `nil` for gray ones.
    public static func layout(of fourcc: String) -> Layout? {
        switch fourcc {
        case "YUYV": .halfWidth
        case "YU12", "YV12": .halfBoth
        default: nil
        }
    }

    /// Copies the chroma of a driver buffer in `fourcc` (see `LumaExtraction`)
    /// into the planes, in place. False when the buffer is too short.
    @discardableResult
    public mutating func extract(fourcc: String, from source: UnsafeRawBufferPointer, bytesPerLine: Int, lumaHeight: Int) -> Bool {
        guard let input = source.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        let width = width, height = height
        switch fourcc {
        case "YUYV":
            guard source.count >= (height - 1) * bytesPerLine + 4 * width else { return false }
            u.withUnsafeMutableBufferPointer { u in
                v.withUnsafeMutableBufferPointer { v in
                    for y in 0..<height {
                        let row = input + y * bytesPerLine, target = y * width
                        for x in 0..<width {
                            u[target + x] = row[4 &* x &+ 1]
                            v[target + x] = row[4 &* x &+ 3]
                        }
                    }
                }
            }
        case "YU12", "YV12":
            // The planes follow the luma, each bytesPerLine / 2 wide.
            let lumaBytes = bytesPerLine * lumaHeight, stride = bytesPerLine / 2
            guard stride >= width, source.count >= lumaBytes + 2 * stride * height else { return false }
            let first = input + lumaBytes, second = first + stride * height
            let (cb, cr) = fourcc == "YU12" ? (first, second) : (second, first)
            for y in 0..<height {
                u.withUnsafeMutableBufferPointer { ($0.baseAddress! + y * width).update(from: cb + y * stride, count: width) }
                v.withUnsafeMutableBufferPointer { ($0.baseAddress! + y * width).update(from: cr + y * stride, count: width) }
            }
        default:
            return false
        }
        return true
    }
}
