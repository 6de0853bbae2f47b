import Imaging
import Testing
import Video

@Suite("a picture turned before detection: half round, mirrored, both")
struct OrientationTests {
    /// A 4x2 frame numbered 1...8 row by row, its 2x1 chroma planes (4:2:0) numbered too.
    static let frame = Frame(
        image: GrayImage(width: 4, height: 2, pixels: [1, 2, 3, 4, 5, 6, 7, 8]), timestamp: 0.5, index: 3,
        chroma: ChromaPlanes(layout: .halfBoth, lumaWidth: 4, lumaHeight: 2, range: .full, u: [10, 20], v: [30, 40]))

    @Test(
        "luma and colour move together, and nothing else changes",
        arguments: [
            (FrameOrientation(upsideDown: true), [8, 7, 6, 5, 4, 3, 2, 1], [20, 10]),
            (FrameOrientation(mirrored: true), [4, 3, 2, 1, 8, 7, 6, 5], [20, 10]),
            (FrameOrientation(upsideDown: true, mirrored: true), [5, 6, 7, 8, 1, 2, 3, 4], [10, 20]),
            (FrameOrientation(), [1, 2, 3, 4, 5, 6, 7, 8], [10, 20]),
        ])
    func turned(orientation: FrameOrientation, luma: [UInt8], u: [UInt8]) {
        let turned = orientation.turned(Self.frame)
        #expect(turned.image.pixels == luma && turned.chroma?.u == u)
        #expect(turned.timestamp == 0.5 && turned.index == 3 && turned.image.width == 4 && turned.chroma?.range == .full)
    }
}
