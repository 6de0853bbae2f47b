import Foundation
import Imaging
import Letterboxing
import Scratch
import Testing
import Video

/// Colour for the networks: each pixel format converted as OpenCV converts it
/// (`tools/colour_reference.py`), and the letterbox in colour equal to the
/// letterbox of that RGB picture, channel by channel.
@Suite("Colour: BT.601 as OpenCV converts it, and the letterbox from the chroma planes")
struct ColourTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The colour astronaut against the left border: 220x300, even both ways as camera frames are.
    static let photo = root.appendingPathComponent("Tests/Fixtures/blazeface-frames/colour-astronaut-left.png").path
    static let jpeg = root.appendingPathComponent("Tests/Fixtures/photos/astronaut-colour.jpg").path

    /// A frame as a driver would give it, with its luma and chroma read back as sentry reads them.
    struct Recorded {
        var bytes: [UInt8]
        var width, height: Int
        var image: GrayImage
        var chroma: ChromaPlanes
    }

    /// The photo recorded by ffmpeg in `fourcc` (BT.601, limited range, as cameras send it).
    static func record(_ fourcc: String) throws -> Recorded {
        let folder = try ScratchDirectory("colour")
        let raw = folder.file("frame.raw").path
        let format = ["YUYV": "yuyv422", "YU12": "yuv420p", "YV12": "yuv420p", "NV12": "nv12"][fourcc]!
        try run(
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-i", photo, "-vf", "scale=out_color_matrix=bt601:out_range=tv",
            "-pix_fmt", format, "-f", "rawvideo", raw)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        let (width, height) = (220, 300)
        if fourcc == "YV12" {  // YU12 with its chroma planes the other way round
            let luma = width * height, plane = luma / 4
            bytes = Array(bytes[..<luma] + bytes[luma + plane..<luma + 2 * plane] + bytes[luma..<luma + plane])
        }
        var image = GrayImage(width: width, height: height)
        var chroma = ChromaPlanes(layout: try #require(ChromaPlanes.layout(of: fourcc)), lumaWidth: width, lumaHeight: height)
        let bytesPerLine = fourcc == "YUYV" ? 2 * width : width
        let extracted = bytes.withUnsafeBytes { buffer in
            LumaExtraction.extract(fourcc: fourcc, from: buffer, bytesPerLine: bytesPerLine, into: &image)
                && chroma.extract(fourcc: fourcc, from: buffer, bytesPerLine: bytesPerLine, lumaHeight: height)
        }
        try #require(extracted)
        return Recorded(bytes: bytes, width: width, height: height, image: image, chroma: chroma)
    }

    /// OpenCV's RGB for a raw frame in `format` (see the tool).
    static func reference(_ format: String, _ bytes: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        let folder = try ScratchDirectory("colour")
        let (input, output) = (folder.file("in.raw"), folder.file("out.rgb"))
        try Data(bytes).write(to: input)
        try run("python3", root.appendingPathComponent("tools/colour_reference.py").path, format, "\(width)", "\(height)", input.path, output.path)
        return try [UInt8](Data(contentsOf: output))
    }

    static func run(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(arguments.joined(separator: " "))")
    }

    /// The largest difference between sentry's RGB of `image` and `chroma` and `reference`, pixel by pixel.
    static func largestDifference(_ image: GrayImage, _ chroma: ChromaPlanes, _ reference: [UInt8]) -> Int {
        let conversion = RGBConversion(chroma.range), shifts = chroma.layout.shifts
        var largest = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let c = (y >> shifts.y) * chroma.width + (x >> shifts.x)
                let rgb = conversion.rgb(y: image[x, y], cb: chroma.u[c], cr: chroma.v[c])
                let index = 3 * (y * image.width + x)
                for (value, expected) in zip([rgb.red, rgb.green, rgb.blue], reference[index..<index + 3]) {
                    largest = max(largest, abs(Int(value) - Int(expected)))
                }
            }
        }
        return largest
    }

    /// The letterbox of `region` of `image` in colour, and of the reference RGB one channel at a time.
    static func letterboxes(_ image: GrayImage, _ chroma: ChromaPlanes, _ reference: [UInt8], region: Letterbox.Region?) -> (
        colour: [Float], channels: [Float]
    ) {
        let size = 128
        var colour = [Float](repeating: 0, count: size * size * 3), channels = colour
        var letterbox = Letterbox(size: size, channels: 3)
        colour.withUnsafeMutableBufferPointer { letterbox.fill($0, from: image, chroma: chroma, region: region) }
        var gray = Letterbox(size: size, channels: 1), plane = [Float](repeating: 0, count: size * size)
        for channel in 0..<3 {
            let values = stride(from: channel, to: reference.count, by: 3).map { reference[$0] }
            values.withUnsafeBufferPointer { pixels in
                plane.withUnsafeMutableBufferPointer {
                    gray.fill($0, from: pixels, width: image.width, height: image.height, region: region)
                }
            }
            for (index, value) in plane.enumerated() { channels[3 * index + channel] = value }
        }
        return (colour, channels)
    }

    /// The letterbox in colour against the RGB one: all but a few values within one level
    /// (0.2-0.75% are not on these frames, 0.1-0.3 levels off on average). Converted first, a
    /// pixel out of gamut (a saturated colour, noise in the black) is clipped before the filter
    /// averages it; shrunk in Y'CbCr, after: there the two differ by a few levels.
    static func expectAgreement(_ colour: [Float], _ channels: [Float], sourceLocation: SourceLocation = #_sourceLocation) {
        let levels = zip(colour, channels).map { abs($0 - $1) * 255 / 2 }
        let beyondOne = Float(levels.filter { $0 > 1.001 }.count) / Float(levels.count)
        let mean = levels.reduce(0, +) / Float(levels.count)
        #expect(
            beyondOne < 0.01 && mean < 0.4 && levels.max()! <= 8,
            "\(beyondOne * 100)% beyond one level, mean \(mean), largest \(levels.max()!)", sourceLocation: sourceLocation)
    }

    @Test("each camera format converts to OpenCV's RGB within one level", arguments: ["YUYV", "YU12", "YV12", "NV12"])
    func cameraFormats(fourcc: String) throws {
        let frame = try Self.record(fourcc)
        #expect(frame.chroma.range == .limited)
        let reference = try Self.reference(fourcc, frame.bytes, width: frame.width, height: frame.height)
        #expect(Self.largestDifference(frame.image, frame.chroma, reference) <= 1)
    }

    @Test(
        "the letterbox from the chroma planes equals the letterbox of the frame converted to RGB first, within one level but where RGB clips",
        arguments: ["YUYV", "YU12", "NV12"], [nil, Letterbox.Region(x: 37, y: 21, width: 151, height: 163)])
    func letterboxFromPlanes(fourcc: String, region: Letterbox.Region?) throws {
        let frame = try Self.record(fourcc)
        let reference = try Self.reference(fourcc, frame.bytes, width: frame.width, height: frame.height)
        let (colour, channels) = Self.letterboxes(frame.image, frame.chroma, reference, region: region)
        Self.expectAgreement(colour, channels)
        // Colour, not three equal channels.
        #expect(stride(from: 0, to: colour.count, by: 3).contains { abs(colour[$0] - colour[$0 + 2]) > 0.1 })
    }

    @Test(
        "a gray picture in colour (a gray video decoded as full-range 4:2:0) gives exactly the gray letterbox",
        arguments: [nil, Letterbox.Region(x: 37, y: 21, width: 151, height: 163)])
    func grayInColour(region: Letterbox.Region?) throws {
        let frame = try Self.record("YU12")
        let neutral = ChromaPlanes(layout: .halfBoth, lumaWidth: frame.width, lumaHeight: frame.height, range: .full)
        var letterbox = Letterbox(size: 128, channels: 3)
        var colour = [Float](repeating: 0, count: 128 * 128 * 3), gray = colour
        colour.withUnsafeMutableBufferPointer { letterbox.fill($0, from: frame.image, chroma: neutral, region: region) }
        gray.withUnsafeMutableBufferPointer { letterbox.fill($0, from: frame.image, region: region) }
        #expect(colour == gray)
    }

    @Test("a colour JPEG gives its own full-range planes (luma as in gray), converted as OpenCV converts JPEG's Y'CbCr")
    func jpegPlanes() throws {
        let still = try #require(StillImage.open(path: Self.jpeg, colour: true))
        let frame = try #require(try still.nextFrame())
        let chroma = try #require(frame.chroma)
        #expect(chroma.range == .full && chroma.layout == .halfBoth)
        let gray = try #require(try StillImage.open(path: Self.jpeg)?.nextFrame())
        #expect(gray.image == frame.image && gray.chroma == nil)
        let bytes = frame.image.pixels + chroma.u + chroma.v
        let reference = try Self.reference("J420", bytes, width: frame.image.width, height: frame.image.height)
        #expect(Self.largestDifference(frame.image, chroma, reference) <= 1)
        let (colour, channels) = Self.letterboxes(frame.image, chroma, reference, region: nil)
        Self.expectAgreement(colour, channels)
    }

    @Test("a colour video file decodes to full-range 4:2:0 whose luma is ffmpeg's gray, byte for byte")
    func videoFile() throws {
        let folder = try ScratchDirectory("colour")
        let clip = folder.file("clip.mkv").path
        try Self.run(
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-loop", "1", "-i", Self.photo, "-t", "0.3", "-r", "10", "-pix_fmt", "yuv420p",
            "-c:v", "libx264", clip)
        let colour = try FileFrameSource(path: clip, colour: true), gray = try FileFrameSource(path: clip)
        defer {
            colour.close()
            gray.close()
        }
        var frames = 0
        while let frame = try colour.nextFrame() {
            let expected = try #require(try gray.nextFrame())
            #expect(frame.image == expected.image)
            let chroma = try #require(frame.chroma)
            #expect(chroma.range == .full && chroma.layout == .halfBoth && chroma.width == 110 && chroma.height == 150)
            #expect(chroma.u.contains { abs(Int($0) - 128) > 10 })
            frames += 1
        }
        let rest = try gray.nextFrame()
        #expect(frames == 3 && rest == nil)
    }
}
