import CPNG
import FoundationEssentials

/// Writes 8-bit RGB pictures as PNG files (libpng's simplified API), for
/// pictures sentry draws (`sentry faces --draw`).
public enum PNGWriting {
    /// `pixels` holds `width` x `height` RGB triples, rows top to bottom.
    public static func write(rgb pixels: [UInt8], width: Int, height: Int, to path: String) throws(VideoError) {
        precondition(pixels.count == width * height * 3)
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(width)
        png.height = UInt32(height)
        png.format = UInt32(PNG_FORMAT_RGB)
        let written = pixels.withUnsafeBytes { png_image_write_to_file(&png, path, 0, $0.baseAddress, Int32(width * 3), nil) }
        guard written != 0 else {
            let reason = withUnsafeBytes(of: png.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            png_image_free(&png)
            throw VideoError(source: path, reason: "cannot be written (\(reason))", hint: "check the folder exists and is writable")
        }
    }
}
