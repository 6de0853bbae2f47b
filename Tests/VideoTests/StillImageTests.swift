import FaceDetection
import Foundation
import Imaging
import Scratch
import Testing
@testable import Video

@Suite("JPEG and PNG photos decoded in process, everything else by ffmpeg as before")
struct StillImageTests {
    /// `photo` (a fixture, 548x342) as a colour JPEG made by ffmpeg, with `segment` (an APP1 block) after its SOI.
    static func jpeg(_ photo: String = "messi5.png", in folder: ScratchDirectory, named name: String = "photo.jpg", segment: [UInt8] = []) throws -> String {
        let made = folder.file("made.jpg").path
        try ffmpeg(["-i", fixture(photo), "-q:v", "3", made])
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: made)))
        let path = folder.file(name).path
        try Data(Array(bytes.prefix(2)) + segment + Array(bytes.dropFirst(2))).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func fixture(_ photo: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/photos/\(photo)").path
    }

    /// Runs ffmpeg with `arguments` (quiet, overwriting).
    static func ffmpeg(_ arguments: [String]) throws {
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffmpeg.arguments = ["ffmpeg", "-nostdin", "-v", "error", "-y"] + arguments
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0)
    }

    /// How far `image` is from ffmpeg's frame of `path`: the largest difference and how many pixels differ.
    static func difference(_ image: GrayImage, _ path: String) throws -> (largest: Int, count: Int) {
        let reference = try ffmpegFrame(path)
        try #require((image.width, image.height) == (reference.width, reference.height))
        let differences = zip(image.pixels, reference.pixels).map { abs(Int($0) - Int($1)) }
        return (differences.max() ?? 0, differences.filter { $0 > 0 }.count)
    }

    /// An APP1 EXIF segment whose first directory holds `orientation` (tag 0x0112), in either byte order.
    static func exif(orientation: UInt16, bigEndian: Bool = true) -> [UInt8] {
        func bytes(_ value: UInt32, _ count: Int) -> [UInt8] {
            let all = (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32(count - 1 - $0))) }
            return bigEndian ? all : all.reversed()
        }
        // In parts: Swift 6.2's type checker gave up on it as one expression.
        let order: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        let header: [UInt8] = order + bytes(42, 2) + bytes(8, 4)
        let entry: [UInt8] = bytes(1, 2) + bytes(0x0112, 2) + bytes(3, 2) + bytes(1, 4) + bytes(UInt32(orientation), 2)
        let tiff: [UInt8] = header + entry + [0, 0] + bytes(0, 4)
        let body = Array("Exif\0\0".utf8) + tiff
        return [0xFF, 0xE1] + [UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
    }

    /// The one frame ffmpeg gives for `path`.
    static func ffmpegFrame(_ path: String) throws -> GrayImage {
        let source = try FileFrameSource(path: path)
        defer { source.close() }
        return try #require(try source.nextFrame()).image
    }

    @Test(
        "a JPEG photo opens without ffmpeg: ffmpeg's size, its pixels within one level, one frame and then the end",
        arguments: [[UInt8](), exif(orientation: 1), exif(orientation: 1, bigEndian: false)])
    func inProcess(segment: [UInt8]) throws {
        let folder = try ScratchDirectory("jpeg")
        let path = try Self.jpeg(in: folder, segment: segment)
        let source = try FileFrameSource.open(path: path)
        #expect(source is StillImage)
        let frame = try #require(try source.nextFrame())
        #expect(try source.nextFrame() == nil)
        #expect((frame.image.width, frame.image.height) == (548, 342))
        let difference = try Self.difference(frame.image, path)
        #expect(difference.largest <= 1)
        #expect(difference.count < frame.image.pixels.count / 10, "inverse DCT rounding only")
        #expect((frame.index, frame.timestamp, source.framesPerSecond) == (0, 0, 25))
    }

    @Test("turned by EXIF, named as a stream, rescaled or looped: ffmpeg opens it (and turns it as before)")
    func leftToFFmpeg() throws {
        let folder = try ScratchDirectory("jpeg")
        for bigEndian in [true, false] {
            let turned = try Self.jpeg(in: folder, named: "turned.jpg", segment: Self.exif(orientation: 6, bigEndian: bigEndian))
            #expect(StillImage.open(path: turned) == nil)
            let source = try FileFrameSource.open(path: turned)
            defer { source.close() }
            #expect(source is FileFrameSource)
            #expect((source.width, source.height) == (342, 548), "ffmpeg turns it a quarter")
        }
        let plain = try Self.jpeg(in: folder)
        #expect(try FileFrameSource.open(path: plain, size: FrameSize(width: 320, height: 200)) is FileFrameSource)
        #expect(try FileFrameSource.open(path: plain, loop: true) is FileFrameSource)
        let stream = folder.file("clip.mjpeg").path
        try FileManager.default.copyItem(atPath: plain, toPath: stream)
        #expect(StillImage.open(path: stream) == nil)
    }

    @Test("a photo given --loop is the same picture again and again, JPEG and PNG alike (ffmpeg's -stream_loop gave a JPEG once)")
    func loopedPhotos() throws {
        for photo in ["astronaut-colour.jpg", "astronaut.png"] {
            let source = try FileFrameSource.open(path: Self.fixture(photo), loop: true)
            defer { source.close() }
            var frames: [Frame] = []
            while frames.count < 30, let frame = try source.nextFrame() { frames.append(frame) }
            #expect(frames.count == 30, "\(photo): \(frames.count) frames")
            #expect(frames.allSatisfy { $0.image.pixels == frames[0].image.pixels }, "\(photo)")
        }
    }

    @Test("a truncated JPEG, a text file named .jpg, EXIF blocks cut short: no in-process picture, no crash; ffmpeg's error as before")
    func badFiles() throws {
        let folder = try ScratchDirectory("jpeg")
        let plain = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try Self.jpeg(in: folder))))
        let truncated = folder.file("truncated.jpg")
        try Data(plain.prefix(plain.count / 2)).write(to: truncated)
        #expect(StillImage.open(path: truncated.path) == nil)
        let text = folder.file("notes.jpg")
        try Data("not a picture\n".utf8).write(to: text)
        #expect(StillImage.open(path: text.path) == nil)
        #expect(throws: VideoError.self) { _ = try FileFrameSource.open(path: text.path).nextFrame() }
        #expect(throws: VideoError.self) { _ = try FileFrameSource.open(path: folder.file("missing.jpg").path) }
        let exif = Self.exif(orientation: 6)
        for cut in stride(from: 4, to: exif.count, by: 3) {
            let segment = Array(exif.prefix(cut))
            _ = StillImage.hasTurningOrientation([0xFF, 0xD8] + segment)
            _ = StillImage.exifOrientation(segment.dropFirst(4)[...])
        }
        #expect(StillImage.hasTurningOrientation([0xFF, 0xD8] + exif))
        #expect(!StillImage.hasTurningOrientation([0xFF, 0xD8] + Self.exif(orientation: 1)))
    }

    @Test("gray PNGs (the fixture photos) open without ffmpeg with exactly its pixels")
    func grayPNG() throws {
        for photo in ["astronaut.png", "camera.png", "chelsea.png", "coffee.png", "messi5.png"] {
            let source = try FileFrameSource.open(path: Self.fixture(photo))
            #expect(source is StillImage, "\(photo)")
            let frame = try #require(try source.nextFrame())
            #expect(try source.nextFrame() == nil)
            #expect(try Self.difference(frame.image, Self.fixture(photo)) == (0, 0), "\(photo)")
        }
    }

    @Test(
        "colour PNGs open without ffmpeg: BT.601 luma within one level of ffmpeg's; with a palette, alpha or 16 bits, ffmpeg's",
        arguments: [("rgb24", true), ("pal8", false), ("rgba", false), ("rgb48be", false), ("ya8", false)])
    func colourPNG(pixelFormat: String, inProcess: Bool) throws {
        let folder = try ScratchDirectory("jpeg")
        let path = folder.file("colour.png").path
        try Self.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1", "-pix_fmt", pixelFormat, path])
        let source = try FileFrameSource.open(path: path)
        defer { source.close() }
        #expect((source is StillImage) == inProcess)
        let frame = try #require(try source.nextFrame())
        let difference = try Self.difference(frame.image, path)
        #expect(difference.largest <= 1)
        #expect(difference.count < frame.image.pixels.count / 20)
    }

    @Test("a truncated PNG, a PNG with a gamma other than sRGB's: not decoded here (ffmpeg's, which ignores the gamma); sRGB's gamma is")
    func pngLeftToFFmpeg() throws {
        let folder = try ScratchDirectory("jpeg")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.fixture("messi5.png"))))
        let truncated = folder.file("truncated.png")
        try Data(bytes.prefix(bytes.count / 2)).write(to: truncated)
        #expect(StillImage.open(path: truncated.path) == nil)
        // A gAMA chunk of 1.0 (linear) after IHDR (8 + 25 bytes).
        let gamma: [UInt8] = [0, 0, 0, 4] + Array("gAMA".utf8) + [0, 1, 0x86, 0xA0]
        let chunk = gamma + Self.crc32(Array(gamma.dropFirst(4)))
        let linear = folder.file("linear.png")
        try Data(Array(bytes.prefix(33)) + chunk + Array(bytes.dropFirst(33))).write(to: linear)
        #expect(StillImage.open(path: linear.path) == nil)
        #expect(try FileFrameSource.open(path: linear.path) is FileFrameSource)
        // sRGB's own gamma (1/2.2) changes nothing: in process, ffmpeg's pixels exactly.
        let srgbGamma: [UInt8] = [0, 0, 0, 4] + Array("gAMA".utf8) + [0, 0, 0xB1, 0x8F]
        let sRGB = folder.file("srgb.png")
        let srgbChunk: [UInt8] = srgbGamma + Self.crc32(Array(srgbGamma.dropFirst(4)))
        try Data(Array(bytes.prefix(33)) + srgbChunk + Array(bytes.dropFirst(33))).write(to: sRGB)
        let opened = try #require(StillImage.open(path: sRGB.path))
        #expect(try Self.difference(try #require(try opened.nextFrame()).image, sRGB.path) == (0, 0))
    }

    /// PNG's chunk checksum, big-endian.
    static func crc32(_ bytes: [UInt8]) -> [UInt8] {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        crc ^= 0xFFFF_FFFF
        return [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    }
}
