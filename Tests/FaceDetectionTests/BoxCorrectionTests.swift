import FaceDetection
import Geometry
import Testing

@Suite("BoxCorrection: one detector's box as the other would draw it")
struct BoxCorrectionTests {
    @Test("the box it was measured on becomes the target box")
    func reproducesTarget() throws {
        let short = Box(x: 300, y: 200, width: 90, height: 96), full = Box(x: 302, y: 197, width: 95, height: 99)
        let correction = try #require(BoxCorrection(from: short, to: full))
        #expect(correction.applied(to: short) == full)
    }

    @Test("the shift and size follow the box: a face twice as near is corrected twice as much")
    func scalesWithTheBox() throws {
        let correction = try #require(BoxCorrection(from: Box(x: 0, y: 0, width: 100, height: 100), to: Box(x: 4, y: -2, width: 110, height: 104)))
        let near = correction.applied(to: Box(x: 100, y: 100, width: 200, height: 200))
        #expect(near == Box(x: 108, y: 96, width: 220, height: 208))
    }

    @Test(
        "boxes too unlike to be one face give no correction",
        arguments: [
            Box(x: 130, y: 100, width: 100, height: 100),  // a third of a width away
            Box(x: 100, y: 100, width: 150, height: 100),  // half as wide again
            Box(x: 100, y: 100, width: 60, height: 100),  // much narrower
        ])
    func refusesOtherFaces(_ other: Box) {
        #expect(BoxCorrection(from: Box(x: 100, y: 100, width: 100, height: 100), to: other) == nil)
    }

    @Test("moving a correction part of the way toward a measurement: the running average the detector keeps")
    func moves() throws {
        let a = try #require(BoxCorrection(from: Box(x: 0, y: 0, width: 100, height: 100), to: Box(x: 0, y: 0, width: 100, height: 100)))
        let b = try #require(BoxCorrection(from: Box(x: 0, y: 0, width: 100, height: 100), to: Box(x: 8, y: 4, width: 110, height: 90)))
        let half = a.moved(toward: b, by: 0.5)
        #expect(abs(half.shiftX - b.shiftX / 2) < 1e-12 && abs(half.shiftY - b.shiftY / 2) < 1e-12)
        #expect(abs(half.scaleX - 1.05) < 1e-12 && abs(half.scaleY - 0.95) < 1e-12)
        #expect(a.moved(toward: b, by: 1) == b && a.moved(toward: b, by: 0) == a)
    }
}
