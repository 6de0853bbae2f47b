import Console
import Foundation
import Imaging
import JPEG
import Testing
import Video

@Suite("JPEG encoding and camera colour")
struct EncodingTests {
    @Test("a gray picture and a 4:2:2 and 4:2:0 colour picture encode to JPEGs of their size")
    func encode() throws {
        let encoder = try JPEGEncoder(quality: 80)
        for chroma in [YUVPicture.Chroma.none, .halfWidth, .halfBoth] {
            var picture = YUVPicture(width: 640, height: 480, chroma: chroma)
            for i in picture.y.indices { picture.y[i] = UInt8(i % 251) }
            let jpeg = try encoder.encode(picture)
            let info = try #require(JPEGHeader.read(jpeg))
            #expect(info.width == 640 && info.height == 480 && info.isGray == (chroma == .none))
            #expect(jpeg.prefix(2) == [0xFF, 0xD8] && jpeg.suffix(2) == [0xFF, 0xD9])
        }
        #expect(throws: JPEGError.self) { try JPEGEncoder(quality: 0) }
        #expect(throws: JPEGError.self) { try encoder.encode(YUVPicture(width: 0, height: 0)) }
    }

    @Test("YUYV chroma: U and V of each pixel pair, row by row, past the row padding")
    func yuyv() {
        // 4x2 pixels, 12 bytes per line (4 of padding): Y0 U Y1 V per pair.
        let rows: [[UInt8]] = [[10, 100, 11, 200, 12, 101, 13, 201, 0, 0, 0, 0], [20, 110, 21, 210, 22, 111, 23, 211, 0, 0, 0, 0]]
        let buffer = rows.flatMap { $0 }
        var planes = ChromaPlanes(layout: .halfWidth, lumaWidth: 4, lumaHeight: 2)
        let ok = buffer.withUnsafeBytes { planes.extract(fourcc: "YUYV", from: $0, bytesPerLine: 12, lumaHeight: 2) }
        #expect(ok)
        #expect(planes.u == [100, 101, 110, 111] && planes.v == [200, 201, 210, 211])
        let short = Array(buffer.prefix(10))
        #expect(!short.withUnsafeBytes { planes.extract(fourcc: "YUYV", from: $0, bytesPerLine: 12, lumaHeight: 2) })
        #expect(ChromaPlanes.layout(of: "GREY") == nil && ChromaPlanes.layout(of: "YU12") == .halfBoth)
    }

    @Test("YU12 and YV12 chroma: the planes after the luma, in their order")
    func planar() {
        // 4x2 luma, then U (2x1) then V (2x1) for YU12.
        let buffer: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 50, 51, 60, 61]
        var planes = ChromaPlanes(layout: .halfBoth, lumaWidth: 4, lumaHeight: 2)
        #expect(buffer.withUnsafeBytes { planes.extract(fourcc: "YU12", from: $0, bytesPerLine: 4, lumaHeight: 2) })
        #expect(planes.u == [50, 51] && planes.v == [60, 61])
        #expect(buffer.withUnsafeBytes { planes.extract(fourcc: "YV12", from: $0, bytesPerLine: 4, lumaHeight: 2) })
        #expect(planes.u == [60, 61] && planes.v == [50, 51])
    }

    @Test("events: face found and lost, lock, fire, serial and steering changes, each once")
    func events() {
        var found = sampleStatus(frame: 1)
        let none = { () -> FrameStatus in
            var s = sampleStatus(frame: 0, faces: [], target: nil); s.commands = []; return s
        }()
        #expect(EventDerivation.events(from: none, to: found).map(\.kind) == ["face"])
        #expect(EventDerivation.events(from: found, to: found).isEmpty)
        found.commands = []
        var locked = found
        locked.locked = true
        locked.commands = ["F70."]
        #expect(EventDerivation.events(from: found, to: locked).map(\.kind) == ["lock", "fire"])
        var lost = none
        lost.serial = "reconnecting"
        lost.steering = "manual"
        #expect(EventDerivation.events(from: found, to: lost).map(\.kind) == ["face", "serial", "steering"])
    }
}
