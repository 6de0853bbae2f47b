import CPNG
import FoundationEssentials
import Glibc
import Imaging
import JPEG

/// A photo decoded in process, JPEG by libjpeg-turbo (linked already for the
/// console's stream) and PNG by libpng: one gray frame, as ffmpeg gives it
/// (with its colour when asked: a JPEG's own chroma planes, a PNG's from its
/// RGB), without starting ffmpeg. ffmpeg loads some 200 libraries: after a boot,
/// with nothing in the page cache, that alone took 0.3 s of the time to the
/// first aim.
///
/// Only what it can give as ffmpeg would, within one level of gray (ffmpeg's
/// inverse DCT rounds otherwise in about 2% of a JPEG's pixels; its BT.601
/// luma of a colour PNG in about 0.5%): a JPEG that decodes to gray with no
/// EXIF orientation other than upright (ffmpeg turns the picture), and an
/// 8-bit (or less) PNG, gray or RGB, without transparency, palette or a gamma
/// other than sRGB's (ffmpeg drops alpha and ignores gamma, where libpng would
/// blend and correct). Anything else, a file it cannot read included, is
/// ffmpeg's to open and to report: `open` returns nil.
public final class StillImage: FrameSource {
    public let width: Int
    public let height: Int
    /// What ffmpeg's stream header says for a still.
    public let framesPerSecond: Double = 25
    public let name: String
    private var frame: Frame?
    public let hasColour: Bool

    /// Larger pictures and files go to ffmpeg (which streams them) rather than into one buffer here.
    static let maximumPixels = 8192 * 8192
    static let maximumBytes = 64 << 20
    /// The names ffmpeg reads as one picture (its image2 demuxer), where `.mjpeg` is a stream of them.
    static let jpegExtensions: Set<String> = ["jpg", "jpeg", "jpe", "jfif"]

    /// Whether ffmpeg reads `path` as one picture (its image2 demuxer), by its name as ffmpeg judges it.
    static func isPicture(_ path: String) -> Bool {
        let suffix = URL(fileURLWithPath: path).pathExtension.lowercased()
        return jpegExtensions.contains(suffix) || ["png", "bmp", "tif", "tiff", "pgm", "ppm", "pnm", "webp"].contains(suffix)
    }

    private init(_ decoded: Decoded, name: String) {
        (width, height) = (decoded.image.width, decoded.image.height)
        frame = Frame(image: decoded.image, timestamp: 0, index: 0, chroma: decoded.chroma)
        hasColour = decoded.chroma != nil
        self.name = name
    }

    /// A photo's luma, and its colour when asked for and it has any.
    struct Decoded {
        var image: GrayImage
        var chroma: ChromaPlanes?
    }

    /// The photo at `path`, or nil when ffmpeg should open it (see the type); in `colour`
    /// where it has any (a JPEG in a sampling read here only as gray goes to ffmpeg).
    public static func open(path: String, colour: Bool = false) -> StillImage? {
        let suffix = URL(fileURLWithPath: path).pathExtension.lowercased()
        guard jpegExtensions.contains(suffix) || suffix == "png" else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= maximumBytes,
            let bytes = FileManager.default.contents(atPath: path)
        else { return nil }
        let decoded = suffix == "png" ? decodePNG(Array(bytes), colour: colour) : decodeJPEG(Array(bytes), colour: colour)
        return decoded.map { StillImage($0, name: URL(fileURLWithPath: path).lastPathComponent) }
    }

    public func nextFrame() throws(VideoError) -> Frame? {
        defer { frame = nil }
        return frame
    }

    public func close() { frame = nil }

    /// libjpeg-turbo's luma of an upright JPEG (and its chroma planes in `colour`), nil for
    /// anything else (a warning, as for a truncated file, included: ffmpeg's to judge).
    static func decodeJPEG(_ file: [UInt8], colour: Bool = false) -> Decoded? {
        guard file.starts(with: [0xFF, 0xD8, 0xFF]), !hasTurningOrientation(file) else { return nil }
        if colour, JPEGHeader.read(file)?.isGray == false {
            guard let planes = JPEGDecoder.planes(file, maximumPixels: maximumPixels) else { return nil }
            let layout: ChromaPlanes.Layout =
                switch planes.sampling {
                case .full: .full
                case .halfWidth: .halfWidth
                case .halfBoth: .halfBoth
                }
            return Decoded(
                image: GrayImage(width: planes.width, height: planes.height, pixels: planes.y),
                chroma: ChromaPlanes(layout: layout, lumaWidth: planes.width, lumaHeight: planes.height, range: .full, u: planes.cb, v: planes.cr))
        }
        guard let gray = JPEGDecoder.gray(file, maximumPixels: maximumPixels) else { return nil }
        return Decoded(image: GrayImage(width: gray.width, height: gray.height, pixels: gray.pixels))
    }

    /// The gray of an 8-bit, opaque, sRGB PNG: its own values, or BT.601 luma in full range
    /// (0.299 R + 0.587 G + 0.114 B, rounded) as ffmpeg's `-pix_fmt gray` computes it; nil for anything else.
    static func decodePNG(_ file: [UInt8], colour wantsColour: Bool = false) -> Decoded? {
        guard hasSRGBGamma(file) else { return nil }
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        guard png_image_begin_read_from_memory(&png, file, file.count) != 0 else { return nil }
        let format = png.format
        // A palette's luma ffmpeg rounds its own way (one level off in half the pixels): its to convert.
        let plain = format & UInt32(PNG_FORMAT_FLAG_ALPHA | PNG_FORMAT_FLAG_LINEAR | PNG_FORMAT_FLAG_COLORMAP) == 0
        let sRGB = png.flags & UInt32(PNG_IMAGE_FLAG_COLORSPACE_NOT_sRGB) == 0
        let (width, height) = (Int(png.width), Int(png.height))
        guard plain, sRGB, width > 0, height > 0, width * height <= maximumPixels else {
            png_image_free(&png)
            return nil
        }
        let colour = format & UInt32(PNG_FORMAT_FLAG_COLOR) != 0
        png.format = colour ? UInt32(PNG_FORMAT_RGB) : UInt32(PNG_FORMAT_GRAY)
        var values = [UInt8](repeating: 0, count: width * height * (colour ? 3 : 1))
        let finished = values.withUnsafeMutableBytes { png_image_finish_read(&png, nil, $0.baseAddress, 0, nil) }
        guard finished != 0 else {
            png_image_free(&png)
            return nil
        }
        guard colour else { return Decoded(image: GrayImage(width: width, height: height, pixels: values)) }
        var pixels = [UInt8](repeating: 0, count: width * height)
        for index in pixels.indices {
            let (red, green, blue) = (Float(values[3 * index]), Float(values[3 * index + 1]), Float(values[3 * index + 2]))
            pixels[index] = UInt8(0.299 * red + 0.587 * green + 0.114 * blue + 0.5)
        }
        return Decoded(
            image: GrayImage(width: width, height: height, pixels: pixels),
            chroma: wantsColour ? ChromaPlanes(rgb: values, width: width, height: height) : nil)
    }

    /// Whether a PNG has no gamma of its own, or sRGB's (gAMA 45455, 1/2.2): libpng corrects
    /// any other to sRGB, which ffmpeg does not (a gAMA of 1.0 moved pixels by up to 72 levels).
    static func hasSRGBGamma(_ png: [UInt8]) -> Bool {
        var offset = 8
        while offset + 12 <= png.count {
            let length = number(png[offset..<offset + 4])
            let type = String(decoding: png[offset + 4..<offset + 8], as: UTF8.self)
            if type == "IDAT" { return true }
            // The loop's bound leaves the four bytes after the type in the file.
            if type == "gAMA" { return length == 4 && (45454...45456).contains(number(png[offset + 8..<offset + 12])) }
            guard length <= png.count else { return false }
            offset += 12 + length
        }
        return true
    }

    /// Whether the file's EXIF block (an APP1 segment before the image data) has an
    /// orientation other than 1, upright: ffmpeg turns such a picture.
    static func hasTurningOrientation(_ bytes: [UInt8]) -> Bool {
        var offset = 2
        // Markers and their lengths up to the start of the scan.
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let length = number(bytes[offset + 2..<offset + 4])
            guard marker != 0xDA, length >= 2, offset + 2 + length <= bytes.count else { return false }
            if marker == 0xE1, let orientation = exifOrientation(bytes[offset + 4..<offset + 2 + length]), orientation != 1 {
                return true
            }
            offset += 2 + length
        }
        return false
    }

    /// `bytes` as one unsigned number, most significant first (PNG, JPEG and big-endian TIFF fields).
    static func number(_ bytes: some Sequence<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    /// Tag 0x0112 of the first image directory of an `Exif\0\0` segment's TIFF block, if it has one.
    static func exifOrientation(_ segment: ArraySlice<UInt8>) -> Int? {
        let block = Array(segment)
        guard block.count >= 14, block.starts(with: Array("Exif\0\0".utf8)) else { return nil }
        let tiff = 6
        let bigEndian: Bool
        switch (block[tiff], block[tiff + 1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: return nil
        }
        func number(_ at: Int, _ size: Int) -> Int? {
            guard at >= 0, at + size <= block.count else { return nil }
            let bytes = block[at..<at + size]
            return bigEndian ? Self.number(bytes) : Self.number(bytes.reversed())
        }
        guard let directory = number(tiff + 4, 4), let entries = number(tiff + directory, 2) else { return nil }
        for entry in 0..<min(entries, 256) {
            let at = tiff + directory + 2 + 12 * entry
            guard let tag = number(at, 2) else { return nil }
            if tag == 0x0112 { return number(at + 8, 2) }
        }
        return nil
    }
}
