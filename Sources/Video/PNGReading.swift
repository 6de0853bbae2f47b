import CPNG

/// Reads PNG files as 8-bit RGB exactly as stored (libpng's simplified API):
/// reference pictures compared value for value, such as dlib's face chips.
public enum PNGReading {
    /// The picture's RGB triples, rows top to bottom; nil when it is not a readable PNG.
    public static func rgb(path: String) -> (width: Int, height: Int, pixels: [UInt8])? {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        guard png_image_begin_read_from_file(&png, path) != 0 else { return nil }
        png.format = UInt32(PNG_FORMAT_RGB)
        let (width, height) = (Int(png.width), Int(png.height))
        guard width > 0, height > 0, width * height <= 1 << 26 else {
            png_image_free(&png)
            return nil
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let read = pixels.withUnsafeMutableBytes { png_image_finish_read(&png, nil, $0.baseAddress, Int32(width * 3), nil) }
        return read != 0 ? (width, height, pixels) : nil
    }
}
