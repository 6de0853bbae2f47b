import CTurboJPEG
import Imaging

/// A picture in planar Y'CbCr: the luma plane, and the chroma planes when
/// the camera gave colour. Planes have no padding between rows.
public struct YUVPicture: Sendable {
    /// How the chroma planes are sampled against the luma.
    public enum Chroma: Sendable, Equatable {
        /// No colour: a gray picture.
        case none
        /// Half width, full height (YUYV cameras).
        case halfWidth
        /// Half width, half height (YU12 cameras, video files).
        case halfBoth
        /// One sample per pixel (RGB photos).
        case full
    }

    public var width: Int
    public var height: Int
    public var chroma: Chroma
    public var y: [UInt8]
    public var u: [UInt8]
    public var v: [UInt8]

    /// A gray picture of `width` x `height`, ready to be filled.
    public init(width: Int, height: Int, chroma: Chroma = .none) {
        self.width = width
        self.height = height
        self.chroma = chroma
        y = [UInt8](repeating: 0, count: width * height)
        let size = Self.chromaSize(width: width, height: height, chroma)
        u = [UInt8](repeating: 128, count: size.width * size.height)
        v = u
    }

    /// The layout a frame's colour planes have (`nil`: a gray frame), as the encoder names it.
    public static func chroma(of layout: ChromaPlanes.Layout?) -> Chroma {
        switch layout {
        case .halfWidth: .halfWidth
        case .halfBoth: .halfBoth
        case .full: .full
        case nil: .none
        }
    }

    /// The size of each chroma plane.
    public static func chromaSize(width: Int, height: Int, _ chroma: Chroma) -> (width: Int, height: Int) {
        switch chroma {
        case .none: (0, 0)
        case .halfWidth: ((width + 1) / 2, height)
        case .halfBoth: ((width + 1) / 2, (height + 1) / 2)
        case .full: (width, height)
        }
    }
}

/// Why a picture could not be encoded, in one line.
public struct JPEGError: Error, CustomStringConvertible {
    public let description: String
}

/// Encodes pictures to baseline JPEG with libjpeg-turbo, straight from the
/// Y'CbCr planes (no colour conversion), into a buffer kept between calls.
/// One encoder per thread.
public final class JPEGEncoder {
    public let quality: Int
    private let handle: tjhandle
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var capacity = 0

    public init(quality: Int = 80) throws(JPEGError) {
        guard (1...100).contains(quality) else { throw JPEGError(description: "JPEG quality \(quality) must be between 1 and 100") }
        guard let handle = tjInitCompress() else { throw JPEGError(description: "libturbojpeg cannot start a compressor") }
        self.quality = quality
        self.handle = handle
    }

    deinit {
        tjDestroy(handle)
        if let buffer { tjFree(buffer) }
    }

    /// Encodes `picture` and hands the JPEG bytes to `body`; they are only
    /// valid inside it (the buffer is reused by the next call).
    public func encode<R>(_ picture: YUVPicture, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) throws -> R {
        guard picture.width > 0, picture.height > 0, picture.y.count >= picture.width * picture.height else {
            throw JPEGError(description: "cannot encode a \(picture.width)x\(picture.height) picture")
        }
        let subsampling: Int32 =
            switch picture.chroma {
            case .none: Int32(TJSAMP_GRAY.rawValue)
            case .halfWidth: Int32(TJSAMP_422.rawValue)
            case .halfBoth: Int32(TJSAMP_420.rawValue)
            case .full: Int32(TJSAMP_444.rawValue)
            }
        let needed = Int(tjBufSize(Int32(picture.width), Int32(picture.height), subsampling))
        if needed > capacity {
            if let buffer { tjFree(buffer) }
            buffer = tjAlloc(Int32(needed))
            capacity = buffer == nil ? 0 : needed
        }
        guard buffer != nil else { throw JPEGError(description: "cannot allocate \(needed) bytes for a JPEG") }
        let chromaWidth = Int32(YUVPicture.chromaSize(width: picture.width, height: picture.height, picture.chroma).width)
        var size = UInt(capacity)
        var output: UnsafeMutablePointer<UInt8>? = buffer
        let status = picture.y.withUnsafeBufferPointer { y in
            picture.u.withUnsafeBufferPointer { u in
                picture.v.withUnsafeBufferPointer { v in
                    var planes: [UnsafePointer<UInt8>?] = [y.baseAddress, u.baseAddress, v.baseAddress]
                    var strides: [Int32] = [Int32(picture.width), chromaWidth, chromaWidth]
                    return tjCompressFromYUVPlanes(
                        handle, &planes, Int32(picture.width), &strides, Int32(picture.height),
                        subsampling, &output, &size, Int32(quality), TJFLAG_NOREALLOC | TJFLAG_FASTDCT)
                }
            }
        }
        guard status == 0 else {
            throw JPEGError(description: "libturbojpeg: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return try body(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// Encodes `picture` into a new array.
    public func encode(_ picture: YUVPicture) throws -> [UInt8] {
        try encode(picture) { Array($0) }
    }
}
