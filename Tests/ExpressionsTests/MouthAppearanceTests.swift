import Expressions
import Foundation
import Geometry
import Imaging
import Testing

@Suite("The mouth's look inside, read from the frame: teeth against the face")
struct MouthAppearanceTests {
    /// A face oval of radius 60 around (100, 100) and the inner lips an ellipse of
    /// `gap` pixels' half-height and 20 pixels' half-width around (100, 130).
    static func points(gap: Float, shift: SIMD2<Float> = .zero) -> FaceLandmarks {
        var points = [SIMD3<Float>](repeating: SIMD3(100, 100, 0), count: FaceLandmarks.count)
        func ring(_ indices: [Int], center: SIMD2<Float>, radii: SIMD2<Float>) {
            for (k, index) in indices.enumerated() {
                let angle = 2 * Float.pi * Float(k) / Float(indices.count)
                let point = center + shift + radii * SIMD2(cos(angle), sin(angle))
                points[index] = SIMD3(point.x, point.y, 0)
            }
        }
        ring(
            [
                10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149, 150, 136,
                172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109,
            ], center: SIMD2(100, 100), radii: SIMD2(60, 60))
        ring(
            [78, 191, 80, 81, 82, 13, 312, 311, 310, 415, 308, 324, 318, 402, 317, 14, 87, 178, 88, 95], center: SIMD2(100, 130),
            radii: SIMD2(20, gap))
        return FaceLandmarks(points: points)
    }

    /// The face a checkerboard of 100 and 140 (mean 120, spread 20), the mouth's inside `mouth`.
    static func image(mouth: UInt8, gap: Float, flat: Bool = false) -> GrayImage {
        var image = GrayImage(width: 200, height: 200)
        for y in 0..<200 {
            for x in 0..<200 {
                let dx = (Float(x) + 0.5 - 100) / 20, dy = (Float(y) + 0.5 - 130) / gap
                image[x, y] = dx * dx + dy * dy < 1 ? mouth : flat ? 120 : ((x + y) % 2 == 0 ? 100 : 140)
            }
        }
        return image
    }

    @Test("teeth between open lips read bright, a dark mouth dark, in the face's own spread of gray")
    func brightAndDark() throws {
        let teeth = try #require(MouthAppearance(Self.points(gap: 8), in: Self.image(mouth: 230, gap: 8)))
        #expect(teeth.brightness > 3 && teeth.highlights > 3 && teeth.contrast < 0.5, "\(teeth)")
        let dark = try #require(MouthAppearance(Self.points(gap: 8), in: Self.image(mouth: 30, gap: 8)))
        #expect(dark.brightness < -2 && dark.highlights < -2, "\(dark)")
    }

    @Test("a shut mouth or a face of one flat gray has nothing to read; a face half out of the frame reads its visible part")
    func nothingToRead() throws {
        #expect(MouthAppearance(Self.points(gap: 0.2), in: Self.image(mouth: 230, gap: 0.2)) == nil)
        #expect(MouthAppearance(Self.points(gap: 8), in: Self.image(mouth: 120, gap: 8, flat: true)) == nil)
        let half = MouthAppearance(Self.points(gap: 8, shift: SIMD2(-90, 0)), in: Self.image(mouth: 230, gap: 8))
        #expect(half != nil)
        #expect(MouthAppearance(Self.points(gap: 8, shift: SIMD2(-500, -500)), in: Self.image(mouth: 230, gap: 8)) == nil)
    }

    @Test("the look moves the smile score: the same outline scores higher with teeth showing")
    func movesTheSmile() throws {
        let measures = FaceMeasures(SyntheticFace(mouthWidth: 0.85, cornerLiftLeft: 0.02, cornerLiftRight: 0.02).landmarks)
        let teeth = try #require(MouthAppearance(Self.points(gap: 8), in: Self.image(mouth: 230, gap: 8)))
        let dark = try #require(MouthAppearance(Self.points(gap: 8), in: Self.image(mouth: 30, gap: 8)))
        let withTeeth = ExpressionScores(measures, appearance: teeth), closed = ExpressionScores(measures, appearance: dark)
        #expect(withTeeth.mouthSmileLeft > closed.mouthSmileLeft + 0.3, "\(withTeeth.mouthSmileLeft) against \(closed.mouthSmileLeft)")
    }
}
