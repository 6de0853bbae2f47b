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
        guard let handle = tjInitDecompress() else { return nil }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = 0
        let status = bytes.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colourspace)
        }
        guard status == 0 else { return nil }
        return body(handle, width, height, subsampling)
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
