import FaceDetection
import Imaging
import Testing
import Video

@Suite("Luma from captured buffers")
struct LumaExtractionTests {
    /// A 4x2 image's luma: 10, 11, 12, 13 / 20, 21, 22, 23.
    let expected: [UInt8] = [10, 11, 12, 13, 20, 21, 22, 23]

    @Test("GREY rows with padding at the end of each line")
    func grey() {
        let buffer: [UInt8] = [10, 11, 12, 13, 99, 99, 20, 21, 22, 23, 99, 99]
        var image = GrayImage(width: 4, height: 2)
        #expect(buffer.withUnsafeBytes { LumaExtraction.extract(fourcc: "GREY", from: $0, bytesPerLine: 6, into: &image) })
        #expect(image.pixels == expected)
    }

    @Test("YUYV: luma is every other byte")
    func yuyv() {
        let buffer: [UInt8] = [10, 128, 11, 129, 12, 127, 13, 126, 20, 1, 21, 2, 22, 3, 23, 4]
        var image = GrayImage(width: 4, height: 2)
        #expect(buffer.withUnsafeBytes { LumaExtraction.extract(fourcc: "YUYV", from: $0, bytesPerLine: 8, into: &image) })
        #expect(image.pixels == expected)
    }

    @Test("YU12: the Y plane comes first")
    func planar() {
        let buffer: [UInt8] = expected + [128, 128, 128, 128]
        var image = GrayImage(width: 4, height: 2)
        #expect(buffer.withUnsafeBytes { LumaExtraction.extract(fourcc: "YU12", from: $0, bytesPerLine: 4, into: &image) })
        #expect(image.pixels == expected)
    }

    @Test("a short buffer is refused, not read past its end")
    func shortBuffer() {
        let buffer: [UInt8] = [10, 11, 12]
        var image = GrayImage(width: 4, height: 2)
        #expect(!buffer.withUnsafeBytes { LumaExtraction.extract(fourcc: "GREY", from: $0, bytesPerLine: 4, into: &image) })
    }

    @Test("frame after frame, the image's pixels stay where they are: no allocation per frame")
    func inPlace() {
        var image = GrayImage(width: 640, height: 480)
        let buffer = [UInt8](repeating: 90, count: 640 * 480 * 2)
        let address = image.withUnsafeMutablePixels { $0.baseAddress }
        for _ in 0..<10 {
            _ = buffer.withUnsafeBytes { LumaExtraction.extract(fourcc: "YUYV", from: $0, bytesPerLine: 1280, into: &image) }
            #expect(image.withUnsafeMutablePixels { $0.baseAddress } == address)
        }
        #expect(image.pixels.allSatisfy { $0 == 90 })
    }

    @Test("writing the next frame in place does not disturb a frame still held")
    func copyOnWrite() {
        var image = GrayImage(width: 4, height: 2)
        let first: [UInt8] = expected
        _ = first.withUnsafeBytes { LumaExtraction.extract(fourcc: "GREY", from: $0, bytesPerLine: 4, into: &image) }
        let held = image
        let second = [UInt8](repeating: 7, count: 8)
        _ = second.withUnsafeBytes { LumaExtraction.extract(fourcc: "GREY", from: $0, bytesPerLine: 4, into: &image) }
        #expect(held.pixels == expected && image.pixels == second)
    }
}
