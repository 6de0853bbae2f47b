/// Bilinear image resize that reproduces OpenCV's bit-exact
/// `INTER_LINEAR_EXACT` for 8-bit images: pixel-centre alignment, 8-bit
/// fixed-point coefficients, edge pixels replicated. OpenCV's cascade
/// detector shrinks frames this way, so using the same arithmetic gives the
/// same windows and the same detections.
struct LinearResize {
    /// Source index and fixed-point weight (of 256) of the next source pixel,
    /// for one destination column or row.
    private struct Tap {
        var index: Int
        var weight: Int
    }

    /// Taps for `destination` samples taken from `source` samples.
    private static func taps(source: Int, destination: Int) -> [Tap] {
        let scale = 1.0 / (Double(destination) / Double(source))
        return (0..<destination).map { d in
            let position = (Double(d) + 0.5) * scale - 0.5
            let lower = Int(position.rounded(.down))
            if lower < 0 || source == 1 { return Tap(index: 0, weight: 0) }
            if lower >= source - 1 { return Tap(index: source - 1, weight: 0) }
            let weight = Int(((position - Double(lower)) * 256).rounded(.toNearestOrEven))
            return Tap(index: lower, weight: weight)
        }
    }

    /// Resizes `source` into `destination` (`width` x `height` bytes), using
    /// `rowBuffer` (at least `2 * width` elements) as scratch space.
    static func resize(
        _ source: UnsafeBufferPointer<UInt8>, width sourceWidth: Int, height sourceHeight: Int,
        into destination: UnsafeMutableBufferPointer<UInt8>, width: Int, height: Int
    ) {
        let columns = taps(source: sourceWidth, destination: width)
        let rows = taps(source: sourceHeight, destination: height)
        var upper = [Int](repeating: 0, count: width)
        var lower = [Int](repeating: 0, count: width)
        var cachedUpperRow = -1
        func horizontal(row: Int, into line: inout [Int]) {
            let base = row * sourceWidth
            for x in 0..<width {
                let tap = columns[x]
                let a = Int(source[base + tap.index])
                // 8.8 fixed point: a * (256 - w) + b * w.
                line[x] = tap.weight == 0 ? a << 8 : a * (256 - tap.weight) + Int(source[base + tap.index + 1]) * tap.weight
            }
        }
        for y in 0..<height {
            let tap = rows[y]
            if cachedUpperRow != tap.index {
                horizontal(row: tap.index, into: &upper)
                cachedUpperRow = tap.index
            }
            let out = y * width
            if tap.weight == 0 {
                for x in 0..<width { destination[out + x] = UInt8(min(255, (upper[x] + 128) >> 8)) }
            } else {
                horizontal(row: tap.index + 1, into: &lower)
                let w1 = tap.weight, w0 = 256 - tap.weight
                for x in 0..<width {
                    // 16.16 fixed point, rounded to the nearest integer.
                    destination[out + x] = UInt8(min(255, (upper[x] * w0 + lower[x] * w1 + 32768) >> 16))
                }
            }
        }
    }
}
