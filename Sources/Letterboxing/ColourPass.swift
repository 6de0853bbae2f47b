import CVectorSums

extension Letterbox {
    /// The colour half of a colour letterbox: the chroma planes shrunk at their own
    /// resolution, with the luma's filter folded onto them (each chroma sample takes the
    /// weights of the pixels it covers: exactly the filter over the chroma repeated to
    /// full size), then the luma and chroma of each model pixel turned into R'G'B'.
    ///
    /// It runs in strips of eight output rows, each through every step (the chroma down,
    /// straight from the frame's bytes, then across, the luma down, RGB) before the next:
    /// the intermediates stay in the first-level cache. Whole planes at each step (a third
    /// of a megabyte each) left the second-level cache, which doubled the chroma's time
    /// whenever the core was shared.
    struct ColourPass {
        /// The chroma's taps across and down, for the region they were folded for.
        private var across = FoldedTaps(), down = FoldedTaps()
        private var folded: (region: Region, shifts: (x: Int, y: Int))?
        /// The strip's vertical pass: eight rows of the region's chroma about its neutral 0,
        /// each row the blue difference's and then the red's, a stride each.
        private var rows: [Float] = []
        /// The horizontal pass's columns: eight rows' chroma a column at a time (eight
        /// floats; past the region, zeros or an earlier region's values, which only weights
        /// of 0 reach); then its sums for those eight rows, an output column at a time. The
        /// blue difference's, then the red's.
        private var columns: [Float] = [], columnSums: [Float] = []
        /// The strip's luma after both passes, and each chroma plane's.
        private var luma: [Float] = [], cb: [Float] = [], cr: [Float] = []

        /// Writes the RGB of the region into `tensor` ([size][size][3]), from the luma's
        /// horizontal pass (`side` rows of `size`, black 0) and the frame's chroma.
        mutating func fill(
            _ tensor: UnsafeMutablePointer<Float>, luma horizontal: UnsafeMutablePointer<Float>, lumaTaps: Taps, chroma: Planes,
            region: Region, padding: (left: Int, top: Int), size: Int
        ) {
            // The folded taps follow the region's place (its parity against the chroma) as well as its size.
            if folded.map({ $0.region != region || $0.shifts != chroma.shifts }) ?? true {
                folded = (region, chroma.shifts)
                across.fold(lumaTaps, outputs: size, padding: padding.left, origin: region.x, length: region.width, shift: chroma.shifts.x)
                down.fold(lumaTaps, outputs: size, padding: padding.top, origin: region.y, length: region.height, shift: chroma.shifts.y)
                let stride = Self.stride(across)
                Self.resize(&luma, to: 8 * size)
                Self.resize(&cb, to: 8 * size)
                Self.resize(&cr, to: 8 * size)
                Self.resize(&rows, to: 8 * 2 * stride)
                Self.resize(&columns, to: 2 * 8 * stride)
                Self.resize(&columnSums, to: 2 * 8 * size)
            }
            let conversion = chroma.conversion
            let crToRed = SIMD8(repeating: conversion.crToRed), cbToBlue = SIMD8(repeating: conversion.cbToBlue)
            let cbToGreen = SIMD8(repeating: conversion.cbToGreen), crToGreen = SIMD8(repeating: conversion.crToGreen)
            let scale = SIMD8<Float>(repeating: 2.0 / 255.0)
            /// A channel's levels (its half added) as the model's -1...1, multiplied and then
            /// added, not fused, as the gray pass does: a gray picture gives its bits exactly.
            @inline(__always) func scaled(_ raised: SIMD8<Float>) -> SIMD8<Float> { sentry_levels8(raised) * scale - 1 }
            for strip in Swift.stride(from: 0, to: size, by: 8) {
                let outputs = strip..<strip + 8
                let pixels = tensor + 3 * strip * size
                // A strip wholly in the padding reads no chroma and, so, no luma either (every
                // tap of its rows falls outside the region): black, -1 in every channel. A 4:3
                // frame's padding is a quarter of the square.
                if down.sampleRows(for: outputs).isEmpty {
                    pixels.update(repeating: -1, count: 3 * 8 * size)
                    continue
                }
                luma.withUnsafeMutableBufferPointer { luma in
                    for y in outputs {
                        let out = luma.baseAddress! + (y - strip) * size
                        Letterbox.verticalRow(horizontal, lumaTaps, width: size, row: y) { x, levels in Letterbox.store(levels, out + x) }
                    }
                }
                Self.shrink(
                    chroma, outputs, size: size, across: across, down: down, rows: &rows,
                    columns: &columns, columnSums: &columnSums, into: &cb, &cr)
                luma.withUnsafeBufferPointer { luma in
                    cb.withUnsafeBufferPointer { cb in
                        cr.withUnsafeBufferPointer { cr in
                            for index in Swift.stride(from: 0, to: 8 * size, by: 8) {
                                // Pillow's half added to the luma once for the three channels, and the chroma's
                                // shares as multiply-adds: the step had as many instructions as the chroma's
                                // horizontal pass, 59 per eight pixels, now 39.
                                let y = Letterbox.load(luma.baseAddress! + index) + 0.5
                                let u = Letterbox.load(cb.baseAddress! + index), v = Letterbox.load(cr.baseAddress! + index)
                                Letterbox.interleave(
                                    scaled(y.addingProduct(v, crToRed)),
                                    scaled(y.addingProduct(u, cbToGreen).addingProduct(v, crToGreen)),
                                    scaled(y.addingProduct(u, cbToBlue)),
                                    into: pixels + 3 * index)
                            }
                        }
                    }
                }
            }
        }

        /// Floats a row of chroma samples takes: its width in eights, and room for the taps past it.
        private static func stride(_ across: FoldedTaps) -> Int { (across.length + 7) / 8 * 8 + across.width }

        /// Output rows `outputs` (eight) of both chroma planes of the region, shrunk to
        /// `size` across, into `cb` and `cr` (eight rows of `size` each): down first (fewer
        /// rows to filter across after), then across. The two planes share their taps, so
        /// they go across together: a row of `rows` is the blue difference's, then the red's,
        /// a stride each.
        private static func shrink(
            _ chroma: Planes, _ outputs: Range<Int>, size: Int, across: FoldedTaps, down: FoldedTaps,
            rows: inout [Float], columns: inout [Float], columnSums: inout [Float], into cb: inout [Float], _ cr: inout [Float]
        ) {
            let width = across.length, stride = stride(across)
            rows.withUnsafeMutableBufferPointer { rows in
                down.withTaps { taps in
                    let start = down.origin * chroma.width + across.origin
                    chromaDown(chroma.u + start, rowStride: chroma.width, taps, length: width, outputs: outputs, into: rows.baseAddress!, pitch: 2 * stride)
                    chromaDown(
                        chroma.v + start, rowStride: chroma.width, taps, length: width, outputs: outputs, into: rows.baseAddress! + stride,
                        pitch: 2 * stride)
                }
                cb.withUnsafeMutableBufferPointer { cb in
                    cr.withUnsafeMutableBufferPointer { cr in
                        columns.withUnsafeMutableBufferPointer { columns in
                            columnSums.withUnsafeMutableBufferPointer { sums in
                                across.withTaps { taps in
                                    shrinkAcross(
                                        rows.baseAddress!, stride: stride, length: width, into: cb.baseAddress!, cr.baseAddress!,
                                        size: size, taps, columns: columns.baseAddress!, sums: sums.baseAddress!)
                                }
                            }
                        }
                    }
                }
            }
        }

        /// A chroma plane's vertical pass, straight from its bytes (`plane` at the region's
        /// first sample, rows `rowStride` apart): output row `y` of `outputs` the weighted sum
        /// of its taps' sample rows less 128 times their weights' sum (the samples about their
        /// neutral 128), `length` values at `target + (y - outputs.lowerBound) * pitch`. The
        /// bytes turned to floats in each multiply-add, not first into a buffer of floats:
        /// that buffer (a strip's 16-30 sample rows of both planes, 42-80 KB) left the
        /// first-level cache, and colour's extra time over gray was 16-29% more.
        private static func chromaDown(
            _ plane: UnsafePointer<UInt8>, rowStride: Int, _ taps: Taps, length: Int, outputs: Range<Int>,
            into target: UnsafeMutablePointer<Float>, pitch: Int
        ) {
            for y in outputs {
                // Rows with no taps (in the padding) read nothing and come out 0.
                let rows = plane + taps.first[y] * rowStride, weights = taps.weights + y * taps.width
                let out = target + (y - outputs.lowerBound) * pitch
                let count = taps.count[y]
                var total: Float = 0
                for k in 0..<count { total += weights[k] }
                let neutral = SIMD8<Float>(repeating: -128 * total)
                var x = 0
                // 32 columns at a time: four sums in flight, not one chain of additions.
                while x + 32 <= length {
                    var s0 = neutral, s1 = neutral, s2 = neutral, s3 = neutral
                    for k in 0..<count {
                        let row = rows + (k &* rowStride &+ x), weight = SIMD8(repeating: weights[k])
                        s0.addProduct(sentry_bytes8(row), weight)
                        s1.addProduct(sentry_bytes8(row + 8), weight)
                        s2.addProduct(sentry_bytes8(row + 16), weight)
                        s3.addProduct(sentry_bytes8(row + 24), weight)
                    }
                    Letterbox.store(s0, out + x)
                    Letterbox.store(s1, out + x + 8)
                    Letterbox.store(s2, out + x + 16)
                    Letterbox.store(s3, out + x + 24)
                    x += 32
                }
                while x + 8 <= length {
                    var sum = neutral
                    for k in 0..<count { sum.addProduct(sentry_bytes8(rows + (k &* rowStride &+ x)), SIMD8(repeating: weights[k])) }
                    Letterbox.store(sum, out + x)
                    x += 8
                }
                // The last few, a byte at a time: eight bytes from here could run past the plane.
                while x < length {
                    var sum = -128 * total
                    for k in 0..<count { sum += Float(rows[k &* rowStride &+ x]) * weights[k] }
                    out[x] = sum
                    x += 1
                }
            }
        }

        /// The horizontal pass over eight rows of both chroma planes (a row: `length`
        /// samples of each, a `stride` apart) into eight rows of `size` outputs of each: the
        /// rows turned into columns of eight, each output its taps' columns weighted (four
        /// outputs of each plane at a time, eight sums in flight, each weight loaded once for
        /// both), the sums turned back into rows. A dot product per output, summed across
        /// lanes as the luma's pass does, took as long for the chroma's 192 rows as the
        /// luma's pass for its 480 (the chroma has half the taps, and the lane sums cost as
        /// much as the products).
        private static func shrinkAcross(
            _ rows: UnsafePointer<Float>, stride: Int, length: Int, into cb: UnsafeMutablePointer<Float>,
            _ cr: UnsafeMutablePointer<Float>, size: Int, _ taps: Taps, columns: UnsafeMutablePointer<Float>,
            sums: UnsafeMutablePointer<Float>
        ) {
            let red = 8 &* stride, redSums = 8 &* size
            var x = 0
            while x < length {
                sentry_transpose8x8(rows + x, 2 &* stride, columns + 8 &* x, 8)
                sentry_transpose8x8(rows + (stride &+ x), 2 &* stride, columns + (red &+ 8 &* x), 8)
                x &+= 8
            }
            x = 0
            while x < size {
                var b0 = SIMD8<Float>(), b1 = SIMD8<Float>(), b2 = SIMD8<Float>(), b3 = SIMD8<Float>()
                var r0 = SIMD8<Float>(), r1 = SIMD8<Float>(), r2 = SIMD8<Float>(), r3 = SIMD8<Float>()
                let c0 = columns + 8 &* taps.first[x], c1 = columns + 8 &* taps.first[x &+ 1]
                let c2 = columns + 8 &* taps.first[x &+ 2], c3 = columns + 8 &* taps.first[x &+ 3]
                let w0 = taps.weights + x &* taps.width, w1 = w0 + taps.width, w2 = w1 + taps.width, w3 = w2 + taps.width
                // Past an output's own taps its weights are 0 (and its columns, past the region, finite).
                let count = max(max(taps.count[x], taps.count[x &+ 1]), max(taps.count[x &+ 2], taps.count[x &+ 3]))
                var k = 0
                while k < count {
                    let at = 8 &* k
                    let v0 = SIMD8<Float>(repeating: w0[k]), v1 = SIMD8<Float>(repeating: w1[k])
                    let v2 = SIMD8<Float>(repeating: w2[k]), v3 = SIMD8<Float>(repeating: w3[k])
                    b0.addProduct(Letterbox.load(c0 + at), v0)
                    r0.addProduct(Letterbox.load(c0 + (red &+ at)), v0)
                    b1.addProduct(Letterbox.load(c1 + at), v1)
                    r1.addProduct(Letterbox.load(c1 + (red &+ at)), v1)
                    b2.addProduct(Letterbox.load(c2 + at), v2)
                    r2.addProduct(Letterbox.load(c2 + (red &+ at)), v2)
                    b3.addProduct(Letterbox.load(c3 + at), v3)
                    r3.addProduct(Letterbox.load(c3 + (red &+ at)), v3)
                    k &+= 1
                }
                let out = sums + 8 &* x
                Letterbox.store(b0, out)
                Letterbox.store(b1, out + 8)
                Letterbox.store(b2, out + 16)
                Letterbox.store(b3, out + 24)
                Letterbox.store(r0, out + redSums)
                Letterbox.store(r1, out + (redSums &+ 8))
                Letterbox.store(r2, out + (redSums &+ 16))
                Letterbox.store(r3, out + (redSums &+ 24))
                x &+= 4
            }
            x = 0
            while x < size {
                sentry_transpose8x8(sums + 8 &* x, 8, cb + x, size)
                sentry_transpose8x8(sums + (redSums &+ 8 &* x), 8, cr + x, size)
                x &+= 8
            }
        }

        private static func resize(_ buffer: inout [Float], to count: Int) {
            guard buffer.count != count else { return }
            buffer.removeAll(keepingCapacity: true)
            buffer.append(contentsOf: repeatElement(0, count: count))
        }
    }

    /// The luma's filter along one axis folded onto a chroma plane: for each output, the
    /// chroma samples its luma taps fall on (inside the region) and the sum of their weights.
    struct FoldedTaps {
        /// The region's first chroma sample along the axis, and how many it spans.
        private(set) var origin = 0, length = 0
        /// Weights per output (a multiple of eight).
        private(set) var width = 8
        private var first: [Int] = [], count: [Int] = [], weights: [Float] = []

        /// The chroma samples (rows or columns from `origin`) that outputs `outputs` read.
        func sampleRows(for outputs: Range<Int>) -> Range<Int> {
            var low = Int.max, high = Int.min
            for output in outputs where count[output] > 0 { (low, high) = (min(low, first[output]), max(high, first[output] + count[output])) }
            return low < high ? low..<high : 0..<0
        }

        func withTaps<Result>(_ body: (Taps) -> Result) -> Result {
            first.withUnsafeBufferPointer { first in
                count.withUnsafeBufferPointer { count in
                    weights.withUnsafeBufferPointer { weights in
                        body(Taps(first: first.baseAddress!, count: count.baseAddress!, weights: weights.baseAddress!, width: width))
                    }
                }
            }
        }

        /// `luma`'s taps run over the padded square: `padding` values of black, then the
        /// region's `pixels` from `pixel` in the frame, whose chroma is every 1 << `shift` of
        /// them. Allocates only when a buffer grows (regions move from frame to frame).
        mutating func fold(_ luma: Taps, outputs: Int, padding: Int, origin pixel: Int, length pixels: Int, shift: Int) {
            origin = pixel >> shift
            length = ((pixel + pixels - 1) >> shift) - origin + 1
            // The chroma sample a tap reads, nil in the black padding.
            func sample(_ output: Int, _ k: Int) -> Int? {
                let position = luma.first[output] + k - padding
                return position >= 0 && position < pixels ? ((pixel + position) >> shift) - origin : nil
            }
            first.removeAll(keepingCapacity: true)
            count.removeAll(keepingCapacity: true)
            for output in 0..<outputs {
                var low = Int.max, high = -1
                for k in 0..<luma.count[output] {
                    if let index = sample(output, k) { (low, high) = (min(low, index), max(high, index)) }
                }
                first.append(high < 0 ? 0 : low)
                count.append(high < 0 ? 0 : high - low + 1)
            }
            width = (count.max()! + 7) / 8 * 8
            weights.removeAll(keepingCapacity: true)
            weights.append(contentsOf: repeatElement(0, count: outputs * width))
            for output in 0..<outputs {
                for k in 0..<luma.count[output] {
                    if let index = sample(output, k) { weights[output * width + index - first[output]] += luma.weights[output * luma.width + k] }
                }
            }
        }
    }
}
