import CTurboJPEG

/// Reads the size and sampling of a JPEG (libturbojpeg's header parser): for
/// tests and for checking what a stream carries.
public enum JPEGHeader {
    public struct Info: Equatable, Sendable {
        public var width: Int
        public var height: Int
        public var isGray: Bool
    }

    public static func read(_ bytes: [UInt8]) -> Info? {
        withHeader(of: bytes) { _, width, height, subsampling in
            Info(width: Int(width), height: Int(height), isGray: subsampling == Int32(TJSAMP_GRAY.rawValue))
        }
    }

    /// `body` given a decoder with `bytes`' header read (width, height, sampling); nil if it is not a JPEG.
    static func withHeader<Result>(of bytes: [UInt8], _ body: (tjhandle, Int32, Int32, Int32) -> Result?) -> Result? {
        withHeader(of: bytes) { handle, width, height, subsampling, _ in body(handle, width, height, subsampling) }
    }

    /// The same with the colour space (`TJCS_…`).
    static func withHeader<Result>(of bytes: [UInt8], _ body: (tjhandle, Int32, Int32, Int32, Int32) -> Result?) -> Result? {
        guard let handle = tjInitDecompress() else { return nil }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = 0
        let status = bytes.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colourspace)
        }
        guard status == 0 else { return nil }
        return body(handle, width, height, subsampling, colourspace)
    }
}

/// Decodes a JPEG to its luma (libjpeg-turbo), for photos opened without ffmpeg.
public enum JPEGDecoder {
    /// The gray pixels of `bytes`, row by row; nil if it is not a JPEG, has more than
    /// `maximumPixels` pixels, or decodes only with a warning (a truncated file, which
    /// libjpeg-turbo pads with grey).
    public static func gray(_ bytes: [UInt8], maximumPixels: Int) -> (width: Int, height: Int, pixels: [UInt8])? {
        JPEGHeader.withHeader(of: bytes) { handle, width, height, _ in
            guard width > 0, height > 0, Int(width) * Int(height) <= maximumPixels else { return nil }
            var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height))
            let status = pixels.withUnsafeMutableBufferPointer {
                tjDecompress2(handle, bytes, UInt(bytes.count), $0.baseAddress, width, 0, height, Int32(TJPF_GRAY.rawValue), 0)
            }
            return status == 0 ? (Int(width), Int(height), pixels) : nil
        }
    }
}

extension JPEGDecoder {
    /// How a JPEG's chroma is sampled against its luma, for those read as planes.
    public enum Sampling: Sendable, Equatable {
        /// 4:4:4
        case full
        /// 4:2:2
        case halfWidth
        /// 4:2:0
        case halfBoth
    }

    /// A colour JPEG's own Y'CbCr planes (full range, as JPEG stores them), without
    /// conversion: the luma is what `gray` gives. Nil for a gray JPEG, one in another
    /// colour space (CMYK) or sampling (4:4:0, 4:1:1), and wherever `gray` gives nil.
    public static func planes(_ bytes: [UInt8], maximumPixels: Int)
        -> (width: Int, height: Int, sampling: Sampling, y: [UInt8], cb: [UInt8], cr: [UInt8])?
    {
        JPEGHeader.withHeader(of: bytes) { handle, width, height, subsampling, colourspace in
            guard width > 0, height > 0, Int(width) * Int(height) <= maximumPixels, colourspace == Int32(TJCS_YCbCr.rawValue) else { return nil }
            let sampling: Sampling
            switch subsampling {
            case Int32(TJSAMP_444.rawValue): sampling = .full
            case Int32(TJSAMP_422.rawValue): sampling = .halfWidth
            case Int32(TJSAMP_420.rawValue): sampling = .halfBoth
            default: return nil
            }
            // The decoder writes whole blocks: the luma plane too is padded to them (an odd
            // size's last column or row is written twice); it is cropped to the picture below.
            let lumaWidth = Int(tjPlaneWidth(0, width, subsampling)), lumaHeight = Int(tjPlaneHeight(0, height, subsampling))
            let chromaWidth = Int(tjPlaneWidth(1, width, subsampling)), chromaHeight = Int(tjPlaneHeight(1, height, subsampling))
            var y = [UInt8](repeating: 0, count: lumaWidth * lumaHeight)
            var cb = [UInt8](repeating: 128, count: chromaWidth * chromaHeight), cr = cb
            let status = y.withUnsafeMutableBufferPointer { y in
                cb.withUnsafeMutableBufferPointer { cb in
                    cr.withUnsafeMutableBufferPointer { cr in
                        var planes: [UnsafeMutablePointer<UInt8>?] = [y.baseAddress, cb.baseAddress, cr.baseAddress]
                        var strides: [Int32] = [Int32(lumaWidth), Int32(chromaWidth), Int32(chromaWidth)]
                        return tjDecompressToYUVPlanes(handle, bytes, UInt(bytes.count), &planes, width, &strides, height, 0)
                    }
                }
            }
            guard status == 0 else { return nil }
            if lumaWidth != Int(width) || lumaHeight != Int(height) {
                y = (0..<Int(height)).flatMap { row in y[row * lumaWidth..<row * lumaWidth + Int(width)] }
            }
            return (Int(width), Int(height), sampling, y, cb, cr)
        }
    }
}
