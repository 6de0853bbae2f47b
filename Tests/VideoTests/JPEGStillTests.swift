import FaceDetection
import Foundation
import Testing
@testable import Video

@Suite("JPEG photos decoded in process, everything else by ffmpeg as before")
struct JPEGStillTests {
    /// A fresh folder for one test's files.
    static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sentry-jpeg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// `photo` (a fixture, 548x342) as a colour JPEG made by ffmpeg, with `segment` (an APP1 block) after its SOI.
    static func jpeg(_ photo: String = "messi5.png", in folder: URL, named name: String = "photo.jpg", segment: [UInt8] = []) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/photos/\(photo)").path
        let made = folder.appendingPathComponent("made.jpg").path
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffmpeg.arguments = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", source, "-q:v", "3", made]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: made)))
        let path = folder.appendingPathComponent(name).path
        try Data(bytes.prefix(2) + segment + bytes.dropFirst(2)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// An APP1 EXIF segment whose first directory holds `orientation` (tag 0x0112), in either byte order.
    static func exif(orientation: UInt16, bigEndian: Bool = true) -> [UInt8] {
        func bytes(_ value: UInt32, _ count: Int) -> [UInt8] {
            let all = (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32(count - 1 - $0))) }
            return bigEndian ? all : all.reversed()
        }
        let tiff = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + bytes(42, 2) + bytes(8, 4)
            + bytes(1, 2) + bytes(0x0112, 2) + bytes(3, 2) + bytes(1, 4) + bytes(UInt32(orientation), 2) + [0, 0] + bytes(0, 4)
        let body = Array("Exif\0\0".utf8) + tiff
        return [0xFF, 0xE1] + [UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
    }

    /// The one frame ffmpeg gives for `path`.
    static func ffmpegFrame(_ path: String) throws -> GrayImage {
        let source = try FileFrameSource(path: path)
        defer { source.close() }
        return try #require(try source.nextFrame()).image
    }

    @Test("a JPEG photo opens without ffmpeg: ffmpeg's size, its pixels within one level, one frame and then the end",
          arguments: [[UInt8](), exif(orientation: 1), exif(orientation: 1, bigEndian: false)])
    func inProcess(segment: [UInt8]) throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.jpeg(in: folder, segment: segment)
        let source = try FileFrameSource.open(path: path)
        #expect(source is JPEGStill)
        let frame = try #require(try source.nextFrame())
        #expect(try source.nextFrame() == nil)
        let reference = try Self.ffmpegFrame(path)
        #expect((frame.image.width, frame.image.height) == (548, 342))
        #expect((frame.image.width, frame.image.height) == (reference.width, reference.height))
        let differences = zip(frame.image.pixels, reference.pixels).map { abs(Int($0) - Int($1)) }
        #expect(differences.max() ?? 0 <= 1)
        #expect(differences.filter { $0 > 0 }.count < differences.count / 10, "inverse DCT rounding only")
        #expect((frame.index, frame.timestamp, source.framesPerSecond) == (0, 0, 25))
    }

    @Test("turned by EXIF, named as a stream, rescaled or looped: ffmpeg opens it (and turns it as before)")
    func leftToFFmpeg() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        for bigEndian in [true, false] {
            let turned = try Self.jpeg(in: folder, named: "turned.jpg", segment: Self.exif(orientation: 6, bigEndian: bigEndian))
            #expect(JPEGStill.open(path: turned) == nil)
            let source = try FileFrameSource.open(path: turned)
            defer { source.close() }
            #expect(source is FileFrameSource)
            #expect((source.width, source.height) == (342, 548), "ffmpeg turns it a quarter")
        }
        let plain = try Self.jpeg(in: folder)
        #expect(try FileFrameSource.open(path: plain, size: FrameSize(width: 320, height: 200)) is FileFrameSource)
        #expect(try FileFrameSource.open(path: plain, loop: true) is FileFrameSource)
        let stream = folder.appendingPathComponent("clip.mjpeg").path
        try FileManager.default.copyItem(atPath: plain, toPath: stream)
        #expect(JPEGStill.open(path: stream) == nil)
    }

    @Test("a truncated JPEG, a text file named .jpg, EXIF blocks cut short: no in-process picture, no crash; ffmpeg's error as before")
    func badFiles() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try Self.jpeg(in: folder))))
        let truncated = folder.appendingPathComponent("truncated.jpg")
        try Data(plain.prefix(plain.count / 2)).write(to: truncated)
        #expect(JPEGStill.open(path: truncated.path) == nil)
        let text = folder.appendingPathComponent("notes.jpg")
        try Data("not a picture\n".utf8).write(to: text)
        #expect(JPEGStill.open(path: text.path) == nil)
        #expect(throws: VideoError.self) { _ = try FileFrameSource.open(path: text.path).nextFrame() }
        #expect(throws: VideoError.self) { _ = try FileFrameSource.open(path: folder.appendingPathComponent("missing.jpg").path) }
        let exif = Self.exif(orientation: 6)
        for cut in stride(from: 4, to: exif.count, by: 3) {
            let segment = Array(exif.prefix(cut))
            _ = JPEGStill.hasTurningOrientation([0xFF, 0xD8] + segment)
            _ = JPEGStill.exifOrientation(segment.dropFirst(4)[...])
        }
        #expect(JPEGStill.hasTurningOrientation([0xFF, 0xD8] + exif))
        #expect(!JPEGStill.hasTurningOrientation([0xFF, 0xD8] + Self.exif(orientation: 1)))
    }
}
