import CTurboJPEG
import FaceDetection
import Foundation

/// A JPEG photo decoded in process by libjpeg-turbo (linked already for the
/// console's stream): one gray frame, as ffmpeg gives it, without starting
/// ffmpeg. ffmpeg loads some 200 libraries: after a boot, with nothing in the
/// page cache, that alone took 0.3 s of the time to the first aim.
///
/// Only what it can give exactly as ffmpeg would: a JPEG that decodes to gray
/// (libjpeg-turbo's luma; ffmpeg's differs by one level in about 2% of the
/// pixels, its inverse DCT rounding otherwise) with no EXIF orientation other
/// than upright (ffmpeg turns the picture; rotations and mirrors are left to
/// it). Anything else, a file it cannot read included, is ffmpeg's to open
/// and to report: `open` returns nil.
public final class JPEGStill: FrameSource {
    public let width: Int
    public let height: Int
    /// What ffmpeg's stream header says for a still.
    public let framesPerSecond: Double = 25
    public let name: String
    private var image: GrayImage?

    /// Larger pictures and files go to ffmpeg (which streams them) rather than into one buffer here.
    static let maximumPixels = 8192 * 8192
    static let maximumBytes = 64 << 20
    /// The names ffmpeg reads as one picture (its image2 demuxer), where `.mjpeg` is a stream of them.
    static let extensions: Set<String> = ["jpg", "jpeg", "jpe", "jfif"]

    private init(image: GrayImage, name: String) {
        (width, height) = (image.width, image.height)
        self.image = image
        self.name = name
    }

    /// The photo at `path`, or nil when ffmpeg should open it (see the type).
    public static func open(path: String) -> JPEGStill? {
        var info = stat()
        guard extensions.contains((path as NSString).pathExtension.lowercased()), stat(path, &info) == 0,
              (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= maximumBytes,
              let bytes = FileManager.default.contents(atPath: path), bytes.starts(with: [0xFF, 0xD8, 0xFF]),
              !hasTurningOrientation(Array(bytes)) else { return nil }
        return bytes.withUnsafeBytes { (file: UnsafeRawBufferPointer) -> JPEGStill? in
            guard let decoder = tjInitDecompress() else { return nil }
            defer { tjDestroy(decoder) }
            let source = file.bindMemory(to: UInt8.self)
            var (width, height, subsampling, colourspace): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
            guard tjDecompressHeader3(decoder, source.baseAddress, UInt(source.count), &width, &height, &subsampling, &colourspace) == 0,
                  width > 0, height > 0, Int(width) * Int(height) <= maximumPixels else { return nil }
            var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height))
            let status = pixels.withUnsafeMutableBufferPointer {
                tjDecompress2(decoder, source.baseAddress, UInt(source.count), $0.baseAddress, width, 0, height,
                              Int32(TJPF_GRAY.rawValue), 0)
            }
            // Warnings (a truncated file libjpeg-turbo pads with grey) count as failures too: ffmpeg's to judge.
            guard status == 0 else { return nil }
            return JPEGStill(image: GrayImage(width: Int(width), height: Int(height), pixels: pixels),
                             name: (path as NSString).lastPathComponent)
        }
    }

    public func nextFrame() throws(VideoError) -> Frame? {
        defer { image = nil }
        return image.map { Frame(image: $0, timestamp: 0, index: 0) }
    }

    public func close() { image = nil }

    /// Whether the file's EXIF block (an APP1 segment before the image data) has an
    /// orientation other than 1, upright: ffmpeg turns such a picture.
    static func hasTurningOrientation(_ bytes: [UInt8]) -> Bool {
        var offset = 2
        // Markers and their lengths up to the start of the scan.
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard marker != 0xDA, length >= 2, offset + 2 + length <= bytes.count else { return false }
            if marker == 0xE1, let orientation = exifOrientation(bytes[offset + 4 ..< offset + 2 + length]), orientation != 1 {
                return true
            }
            offset += 2 + length
        }
        return false
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
            let bytes = block[at ..< at + size]
            return (bigEndian ? Array(bytes) : bytes.reversed()).reduce(0) { $0 << 8 | Int($1) }
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
