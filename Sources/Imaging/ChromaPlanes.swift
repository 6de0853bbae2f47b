/// The colour of a frame (Cb and Cr), kept beside its luma: the networks
/// (BlazeFace, the face mesh) were trained on colour and find more faces with
/// it, and the web console shows it. The cascades read only the luma.
public struct ChromaPlanes: Sendable, Equatable {
    /// How the planes are sampled against the luma.
    public enum Layout: Sendable, Equatable {
        /// Half width, full height (4:2:2, from YUYV).
        case halfWidth
        /// Half width, half height (4:2:0, from YU12/YV12/NV12, ffmpeg's yuv420p, most JPEGs).
        case halfBoth
        /// One sample per pixel (4:4:4, from an RGB photo or such a JPEG).
        case full

        /// log2 of the luma pixels per chroma sample across and down.
        public var shifts: (x: Int, y: Int) {
            switch self {
            case .halfWidth: (1, 0)
            case .halfBoth: (1, 1)
            case .full: (0, 0)
            }
        }
    }

    /// BT.601's two ways to put Y'CbCr in a byte: cameras and video files use
    /// the limited one (luma 16...235, chroma 16...240), JPEG the full one.
    public enum Range: Sendable, Equatable {
        case limited
        case full
    }

    public let layout: Layout
    /// The range of these planes and of the luma that goes with them.
    public var range: Range
    public let width: Int
    public let height: Int
    public var u: [UInt8]
    public var v: [UInt8]

    /// Neutral (gray) planes for a `lumaWidth` x `lumaHeight` frame.
    public init(layout: Layout, lumaWidth: Int, lumaHeight: Int, range: Range = .limited) {
        self.layout = layout
        self.range = range
        let shifts = layout.shifts
        width = (lumaWidth + (1 << shifts.x) - 1) >> shifts.x
        height = (lumaHeight + (1 << shifts.y) - 1) >> shifts.y
        u = [UInt8](repeating: 128, count: width * height)
        v = u
    }

    /// Planes from their samples: `u` and `v` each `width` x `height` of `layout` for the luma's size.
    public init(layout: Layout, lumaWidth: Int, lumaHeight: Int, range: Range, u: [UInt8], v: [UInt8]) {
        self.init(layout: layout, lumaWidth: lumaWidth, lumaHeight: lumaHeight, range: range)
        precondition(u.count == width * height && v.count == u.count, "chroma planes do not match \(lumaWidth)x\(lumaHeight)")
        (self.u, self.v) = (u, v)
    }

    /// The full-range chroma of an RGB picture (three bytes a pixel), one sample per
    /// pixel: JPEG's (JFIF's) BT.601 equations, rounded.
    public init(rgb: [UInt8], width: Int, height: Int) {
        precondition(rgb.count == 3 * width * height)
        self.init(layout: .full, lumaWidth: width, lumaHeight: height, range: .full)
        for index in 0..<width * height {
            let (red, green, blue) = (Float(rgb[3 * index]), Float(rgb[3 * index + 1]), Float(rgb[3 * index + 2]))
            u[index] = RGBConversion.level(128 - 0.168736 * red - 0.331264 * green + 0.5 * blue)
            v[index] = RGBConversion.level(128 + 0.5 * red - 0.418688 * green - 0.081312 * blue)
        }
    }

    /// The layout a camera format carries, or `nil` for gray ones.
    public static func layout(of fourcc: String) -> Layout? {
        switch fourcc {
        case "YUYV": .halfWidth
        case "YU12", "YV12", "NV12": .halfBoth
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
        case "NV12":
            // One plane after the luma, Cb and Cr interleaved, bytesPerLine wide.
            let lumaBytes = bytesPerLine * lumaHeight
            guard bytesPerLine >= 2 * width, source.count >= lumaBytes + bytesPerLine * (height - 1) + 2 * width else { return false }
            u.withUnsafeMutableBufferPointer { u in
                v.withUnsafeMutableBufferPointer { v in
                    for y in 0..<height {
                        let row = input + lumaBytes + y * bytesPerLine, target = y * width
                        for x in 0..<width {
                            u[target + x] = row[2 &* x]
                            v[target + x] = row[2 &* x &+ 1]
                        }
                    }
                }
            }
        default:
            return false
        }
        return true
    }
}
