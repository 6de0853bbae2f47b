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

    // Kept between calls so that a resize allocates nothing once warm.
    private var columns: [Tap] = []
    private var rows: [Tap] = []
    private var upper: [Int] = []
    private var lower: [Int] = []

    /// Fills `taps` for `destination` samples taken from `source` samples.
    private static func taps(source: Int, destination: Int, into taps: inout [Tap]) {
        taps.removeAll(keepingCapacity: true)
        let scale = 1.0 / (Double(destination) / Double(source))
        for d in 0..<destination {
            let position = (Double(d) + 0.5) * scale - 0.5
            let lower = Int(position.rounded(.down))
            if lower < 0 || source == 1 {
                taps.append(Tap(index: 0, weight: 0))
            } else if lower >= source - 1 {
                taps.append(Tap(index: source - 1, weight: 0))
            } else {
                taps.append(Tap(index: lower, weight: Int(((position - Double(lower)) * 256).rounded(.toNearestOrEven))))
            }
        }
    }

    /// Resizes `source` into `destination` (`width` x `height` bytes).
    mutating func resize(
        _ source: UnsafeBufferPointer<UInt8>, width sourceWidth: Int, height sourceHeight: Int,
        into destination: UnsafeMutableBufferPointer<UInt8>, width: Int, height: Int
    ) {
        Self.taps(source: sourceWidth, destination: width, into: &columns)
        Self.taps(source: sourceHeight, destination: height, into: &rows)
        if upper.count < width {
            upper = [Int](repeating: 0, count: width)
            lower = upper
        }
        let columns = columns
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
