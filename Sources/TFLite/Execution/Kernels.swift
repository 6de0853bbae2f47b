import CVectorClamp

/// The arithmetic of each operator on float32 NHWC tensors (batch 1), on raw
/// pointers into buffers the interpreter allocated once. Channels are the
/// innermost dimension, so the loops run over channels eight at a time.
typealias Vector = SIMD8<Float>

/// Clamping bounds that implement a fused activation.
struct Bounds {
    var lower: Float
    var upper: Float

    init(_ activation: Activation) {
        switch activation {
        case .none: (lower, upper) = (-.infinity, .infinity)
        case .relu: (lower, upper) = (0, .infinity)
        case .relu6: (lower, upper) = (0, 6)
        case .reluMinusOneToOne: (lower, upper) = (-1, 1)
        }
    }

    /// (In C: Swift's `replacing(with:where:)` compiles to vmaxps/vminps in some
    /// kernels and to 128-bit compare-and-blend pairs in others; the standard
    /// library's `clamped` and `pointwiseMax` go lane by lane through a call.)
    @inline(__always) func apply(_ value: Vector) -> Vector { sentry_clamp8(value, lower, upper) }

    @inline(__always) func apply(_ value: Float) -> Float { min(max(value, lower), upper) }
}

@inline(__always) func load(_ pointer: UnsafePointer<Float>) -> Vector {
    UnsafeRawPointer(pointer).loadUnaligned(as: Vector.self)
}

@inline(__always) func store(_ value: Vector, _ pointer: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: Vector.self)
}

/// Stores the first `count` lanes of `value` (all eight when `count` ≥ 8): the tail of a channel row.
@inline(__always) func store(_ value: Vector, _ pointer: UnsafeMutablePointer<Float>, count: Int) {
    if count >= 8 { return store(value, pointer) }
    // Half a vector (a 12- or 36-channel row's tail) in one store, not a call.
    if count == 4 { return UnsafeMutableRawPointer(pointer).storeBytes(of: value.lowHalf, as: SIMD4<Float>.self) }
    storeLanes(value, pointer, count: count)
}

/// The lane-by-lane store of a tail, kept out of line: inlined, it leads the
/// optimiser to compute the whole vector lane by lane, the full stores too.
@inline(never) func storeLanes(_ value: Vector, _ pointer: UnsafeMutablePointer<Float>, count: Int) {
    for lane in 0..<count { pointer[lane] = value[lane] }
}

/// The geometry of a 2-D window over an NHWC tensor, with TFLite's padding rules.
struct WindowGeometry {
    var inputWidth, inputHeight, outputWidth, outputHeight: Int
    var window: Window
    /// Zeros before the first input column/row (SAME puts the odd one after).
    var padLeft, padTop: Int

    init(inputWidth: Int, inputHeight: Int, window: Window) {
        self.inputWidth = inputWidth
        self.inputHeight = inputHeight
        self.window = window
        func size(_ input: Int, _ kernel: Int, _ stride: Int) -> (output: Int, padBefore: Int) {
            switch window.padding {
            case .valid: return ((input - kernel) / stride + 1, 0)
            case .same:
                let output = (input + stride - 1) / stride
                return (output, max((output - 1) * stride + kernel - input, 0) / 2)
            }
        }
        (outputWidth, padLeft) = size(inputWidth, window.width, window.strideX)
        (outputHeight, padTop) = size(inputHeight, window.height, window.strideY)
    }

    /// The output columns whose window lies wholly inside the input's columns
    /// (the kernels' fast paths; the columns before and after cross the border).
    var insideColumns: Range<Int> {
        let first = min((padLeft + window.strideX - 1) / window.strideX, outputWidth)
        let lastWindowStart = inputWidth + padLeft - window.width
        let end = lastWindowStart >= 0 ? min(lastWindowStart / window.strideX + 1, outputWidth) : 0
        return first..<max(end, first)
    }

    /// The kernel rows (or columns) that land inside the input for output row `y` (column).
    @inline(__always) func taps(output: Int, stride: Int, pad: Int, kernel: Int, input: Int) -> (origin: Int, range: Range<Int>) {
        let origin = output * stride - pad
        return (origin, max(0, -origin)..<min(kernel, input - origin))
    }
}

enum Kernels {
    /// 1x1 convolution, stride 1: a matrix product of `pixels` x `inputChannels`
    /// by the repacked weights `inputChannels` x `paddedOutputChannels` (rows padded
    /// to a multiple of 8), plus bias. Four pixels by sixteen channels per step, and
    /// by two vectors whenever more than eight channels are left: a 12-channel layer
    /// is one pass over its input, not two of eight lanes each (48x48x48 to 12 channels:
    /// 58 -> 34 us).
    ///
    /// With a `residual` (a fused ADD), each pixel's first `residualChannels` sums
    /// get that tensor's values added before the activation; the channels after them
    /// get nothing, as if the residual had been zero-padded (a fused PAD).
    ///
    /// Only output channels `channels` (all if nil; a range starting at a multiple of 16)
    /// are computed: threads share a layer with few pixels and many channels that way.
    static func pointwiseConvolution(
        input: UnsafePointer<Float>, pixels: Range<Int>, channels: Range<Int>? = nil, inputChannels: Int,
        weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, paddedOutputChannels: Int,
        output: UnsafeMutablePointer<Float>, outputChannels: Int, bounds: Bounds,
        residual: UnsafePointer<Float>? = nil, residualChannels: Int = 0
    ) {
        if paddedOutputChannels == 1 {
            return pointwiseToOneChannel(
                input: input, pixels: pixels, inputChannels: inputChannels, weights: weights,
                bias: bias[0], output: output, bounds: bounds)
        }
        let stride = paddedOutputChannels
        let channelEnd = channels?.upperBound ?? outputChannels
        var channel = channels?.lowerBound ?? 0
        while channel < channelEnd {
            let wide = channelEnd - channel > 8
            let b0 = load(bias + channel), b1 = wide ? load(bias + channel + 8) : Vector()
            let finish = Finish(
                bounds: bounds, output: output, outputChannels: outputChannels, channel: channel,
                lanes: min(channelEnd - channel, wide ? 16 : 8), residual: residual, residualChannels: residualChannels)
            var pixel = pixels.lowerBound
            let end = pixels.upperBound
            // Eight channels only: eight pixels at a time, so that eight sums are in flight.
            while !wide, pixel + 8 <= end {
                var a0 = b0, a1 = b0, a2 = b0, a3 = b0, a4 = b0, a5 = b0, a6 = b0, a7 = b0
                // A pointer per pixel: indexed as `row[n * inputChannels + k]`, each load
                // would cost an overflow-checked add.
                let row0 = input + pixel * inputChannels, row1 = row0 + inputChannels
                let row2 = row1 + inputChannels, row3 = row2 + inputChannels, row4 = row3 + inputChannels
                let row5 = row4 + inputChannels, row6 = row5 + inputChannels, row7 = row6 + inputChannels
                var w = weights + channel
                for k in 0..<inputChannels {
                    let w0 = load(w)
                    a0.addProduct(Vector(repeating: row0[k]), w0)
                    a1.addProduct(Vector(repeating: row1[k]), w0)
                    a2.addProduct(Vector(repeating: row2[k]), w0)
                    a3.addProduct(Vector(repeating: row3[k]), w0)
                    a4.addProduct(Vector(repeating: row4[k]), w0)
                    a5.addProduct(Vector(repeating: row5[k]), w0)
                    a6.addProduct(Vector(repeating: row6[k]), w0)
                    a7.addProduct(Vector(repeating: row7[k]), w0)
                    w += stride
                }
                finish.write(a0, pixel: pixel)
                finish.write(a1, pixel: pixel &+ 1)
                finish.write(a2, pixel: pixel &+ 2)
                finish.write(a3, pixel: pixel &+ 3)
                finish.write(a4, pixel: pixel &+ 4)
                finish.write(a5, pixel: pixel &+ 5)
                finish.write(a6, pixel: pixel &+ 6)
                finish.write(a7, pixel: pixel &+ 7)
                pixel += 8
            }
            while pixel + 4 <= end {
                var a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1, a30 = b0, a31 = b1
                let row0 = input + pixel * inputChannels, row1 = row0 + inputChannels
                let row2 = row1 + inputChannels, row3 = row2 + inputChannels
                var w = weights + channel
                if wide {
                    for k in 0..<inputChannels {
                        let w0 = load(w), w1 = load(w + 8)
                        let x0 = Vector(repeating: row0[k]), x1 = Vector(repeating: row1[k])
                        let x2 = Vector(repeating: row2[k]), x3 = Vector(repeating: row3[k])
                        a00.addProduct(x0, w0); a01.addProduct(x0, w1)
                        a10.addProduct(x1, w0); a11.addProduct(x1, w1)
                        a20.addProduct(x2, w0); a21.addProduct(x2, w1)
                        a30.addProduct(x3, w0); a31.addProduct(x3, w1)
                        w += stride
                    }
                } else {
                    for k in 0..<inputChannels {
                        let w0 = load(w)
                        a00.addProduct(Vector(repeating: row0[k]), w0)
                        a10.addProduct(Vector(repeating: row1[k]), w0)
                        a20.addProduct(Vector(repeating: row2[k]), w0)
                        a30.addProduct(Vector(repeating: row3[k]), w0)
                        w += stride
                    }
                }
                finish.write(a00, a01, pixel: pixel)
                finish.write(a10, a11, pixel: pixel &+ 1)
                finish.write(a20, a21, pixel: pixel &+ 2)
                finish.write(a30, a31, pixel: pixel &+ 3)
                pixel += 4
            }
            while pixel < end {
                var a0 = b0, a1 = b1
                let row = input + pixel * inputChannels
                var w = weights + channel
                for k in 0..<inputChannels {
                    let x = Vector(repeating: row[k])
                    a0.addProduct(x, load(w))
                    if wide { a1.addProduct(x, load(w + 8)) }
                    w += stride
                }
                finish.write(a0, a1, pixel: pixel)
                pixel += 1
            }
            channel += wide ? 16 : 8
        }
    }

    /// A 1x1 convolution to one channel (a classifier head), weights contiguous: per
    /// pixel, a dot product over the input channels eight at a time. The general
    /// kernel would fill seven of every eight lanes with zero weights.
    private static func pointwiseToOneChannel(
        input: UnsafePointer<Float>, pixels: Range<Int>, inputChannels: Int,
        weights: UnsafePointer<Float>, bias: Float,
        output: UnsafeMutablePointer<Float>, bounds: Bounds
    ) {
        for pixel in pixels {
            let row = input + pixel * inputChannels
            var sums = Vector()
            var k = 0
            while k + 8 <= inputChannels {
                sums.addProduct(load(row + k), load(weights + k))
                k += 8
            }
            var sum = sums.sum()
            while k < inputChannels {
                sum += row[k] * weights[k]
                k += 1
            }
            output[pixel] = bounds.apply(sum + bias)
        }
    }

    /// How the 1x1 convolution stores one channel block's sums: the residual's values
    /// added, then the activation. Worked out once per block (where the residual and
    /// the output start, which lanes have a residual value, how many lanes are
    /// stored), so that per pixel only arithmetic and stores remain: worked out per
    /// vector stored, with checked offsets, it took more time than the products in a
    /// layer with eight input channels.
    private struct Finish {
        /// One eight-lane half of a block's residual: where pixel 0's values are, if any.
        struct ResidualHalf {
            let values: UnsafePointer<Float>?
            let stride: Int
            /// Lanes past the residual's channels (a fused PAD) get nothing.
            let present: SIMDMask<SIMD8<Int32>>
            let partial: Bool

            init(_ residual: UnsafePointer<Float>?, channels: Int, from channel: Int) {
                let lanes = min(max(channels - channel, 0), 8)
                values = lanes > 0 ? residual.map { $0 + channel } : nil
                stride = channels
                present = SIMD8<Int32>(0, 1, 2, 3, 4, 5, 6, 7) .< SIMD8<Int32>(repeating: Int32(lanes))
                partial = lanes < 8
            }

            @_transparent func added(to sum: Vector, _ pixel: Int) -> Vector {
                guard let values else { return sum }
                // Wrapping: offsets within a tensor the loader bounded cannot overflow.
                let value = load(values + pixel &* stride)
                return sum + (partial ? value.replacing(with: 0, where: .!present) : value)
            }
        }

        let bounds: Bounds
        let output: UnsafeMutablePointer<Float>
        let outputChannels: Int
        /// Channels stored per pixel: up to 8 from the first vector, the rest from the second.
        let lanes: Int
        let low: ResidualHalf
        let high: ResidualHalf

        init(
            bounds: Bounds, output: UnsafeMutablePointer<Float>, outputChannels: Int, channel: Int, lanes: Int,
            residual: UnsafePointer<Float>?, residualChannels: Int
        ) {
            self.bounds = bounds
            self.output = output + channel
            self.outputChannels = outputChannels
            self.lanes = lanes
            low = ResidualHalf(residual, channels: residualChannels, from: channel)
            high = ResidualHalf(residual, channels: residualChannels, from: channel + 8)
        }

        /// Stores the block's channels of `pixel`: the first `lanes` of `first`, then of `second`.
        @_transparent func write(_ first: Vector, _ second: Vector = Vector(), pixel: Int) {
            let out = output + pixel &* outputChannels
            store(bounds.apply(low.added(to: first, pixel)), out, count: lanes)
            if lanes > 8 { store(bounds.apply(high.added(to: second, pixel)), out + 8, count: lanes &- 8) }
        }
    }

    /// Stores eight channels from `channel` on, fewer at the end of the row, none past it.
    @inline(__always) private static func write(_ value: Vector, to pixel: UnsafeMutablePointer<Float>, channel: Int, of channels: Int) {
        if channels - channel >= 8 { store(value, pixel + channel) } else if channel < channels { store(value, pixel + channel, count: channels - channel) }
    }

    /// A general convolution with repacked weights [kh][kw][inputChannels][paddedOutputChannels]:
    /// per output pixel, each input value is broadcast once into up to 32 channels' sums.
    static func convolution(
        input: UnsafePointer<Float>, inputChannels: Int, geometry g: WindowGeometry, rows outputRows: Range<Int>,
        weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, paddedOutputChannels: Int,
        output: UnsafeMutablePointer<Float>, outputChannels: Int, bounds: Bounds
    ) {
        let w = g.window
        let inside = g.insideColumns
        let (firstInside, endInside) = (inside.lowerBound, inside.upperBound)
        for y in outputRows {
            let rows = g.taps(output: y, stride: w.strideY, pad: g.padTop, kernel: w.height, input: g.inputHeight)
            var x = 0
            while x < g.outputWidth {
                // Two pixels at a time inside: each weight vector loaded once for both,
                // and twice the independent sums in flight.
                if x >= firstInside, x + 2 <= endInside {
                    convolutionPair(
                        input: input, inputChannels: inputChannels, geometry: g, rows: rows, x: x, y: y,
                        weights: weights, bias: bias, paddedOutputChannels: paddedOutputChannels,
                        output: output, outputChannels: outputChannels, bounds: bounds)
                    x += 2
                    continue
                }
                let columns = g.taps(output: x, stride: w.strideX, pad: g.padLeft, kernel: w.width, input: g.inputWidth)
                let out = output + (y * g.outputWidth + x) * outputChannels
                var channel = 0
                while channel < outputChannels {
                    let blocks = min(4, (paddedOutputChannels - channel) / 8)
                    var s0 = load(bias + channel)
                    var s1 = blocks > 1 ? load(bias + channel + 8) : Vector()
                    var s2 = blocks > 2 ? load(bias + channel + 16) : Vector()
                    var s3 = blocks > 3 ? load(bias + channel + 24) : Vector()
                    for ky in rows.range {
                        for kx in columns.range {
                            let pixel = input + ((rows.origin + ky) * g.inputWidth + columns.origin + kx) * inputChannels
                            var tap = weights + ((ky * w.width + kx) * inputChannels) * paddedOutputChannels + channel
                            for k in 0..<inputChannels {
                                let value = Vector(repeating: pixel[k])
                                s0.addProduct(value, load(tap))
                                if blocks > 1 { s1.addProduct(value, load(tap + 8)) }
                                if blocks > 2 { s2.addProduct(value, load(tap + 16)) }
                                if blocks > 3 { s3.addProduct(value, load(tap + 24)) }
                                tap += paddedOutputChannels
                            }
                        }
                    }
                    write(bounds.apply(s0), to: out, channel: channel, of: outputChannels)
                    if blocks > 1 { write(bounds.apply(s1), to: out, channel: channel + 8, of: outputChannels) }
                    if blocks > 2 { write(bounds.apply(s2), to: out, channel: channel + 16, of: outputChannels) }
                    if blocks > 3 { write(bounds.apply(s3), to: out, channel: channel + 24, of: outputChannels) }
                    channel += 8 * blocks
                }
                x += 1
            }
        }
    }

    /// Output pixels `x` and `x + 1` of row `y`, both windows wholly inside the input's columns.
    @inline(__always) private static func convolutionPair(
        input: UnsafePointer<Float>, inputChannels: Int, geometry g: WindowGeometry, rows: (origin: Int, range: Range<Int>),
        x: Int, y: Int, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, paddedOutputChannels: Int,
        output: UnsafeMutablePointer<Float>, outputChannels: Int, bounds: Bounds
    ) {
        let w = g.window
        let left = x * w.strideX - g.padLeft
        let step = w.strideX * inputChannels
        let out = output + (y * g.outputWidth + x) * outputChannels
        var channel = 0
        while channel < outputChannels {
            let blocks = min(4, (paddedOutputChannels - channel) / 8)
            var a0 = load(bias + channel), b0 = a0
            var a1 = blocks > 1 ? load(bias + channel + 8) : Vector(), b1 = a1
            var a2 = blocks > 2 ? load(bias + channel + 16) : Vector(), b2 = a2
            var a3 = blocks > 3 ? load(bias + channel + 24) : Vector(), b3 = a3
            let taps = w.width &* inputChannels
            for ky in rows.range {
                // Wrapping offsets (the window lies inside the tensors the planner sized): checked,
                // they cost as much as the products of a one-channel first layer.
                let row = input + (((rows.origin &+ ky) &* g.inputWidth &+ left) &* inputChannels), next = row + step
                var tap = weights + (ky &* taps &* paddedOutputChannels &+ channel)
                for offset in 0..<taps {
                    let first = Vector(repeating: row[offset]), second = Vector(repeating: next[offset])
                    let w0 = load(tap)
                    a0.addProduct(first, w0)
                    b0.addProduct(second, w0)
                    if blocks > 1 {
                        let w1 = load(tap + 8)
                        a1.addProduct(first, w1)
                        b1.addProduct(second, w1)
                    }
                    if blocks > 2 {
                        let w2 = load(tap + 16)
                        a2.addProduct(first, w2)
                        b2.addProduct(second, w2)
                    }
                    if blocks > 3 {
                        let w3 = load(tap + 24)
                        a3.addProduct(first, w3)
                        b3.addProduct(second, w3)
                    }
                    tap += paddedOutputChannels
                }
            }
            let next = out + outputChannels
            write(bounds.apply(a0), to: out, channel: channel, of: outputChannels)
            write(bounds.apply(b0), to: next, channel: channel, of: outputChannels)
            if blocks > 1 {
                write(bounds.apply(a1), to: out, channel: channel + 8, of: outputChannels)
                write(bounds.apply(b1), to: next, channel: channel + 8, of: outputChannels)
            }
            if blocks > 2 {
                write(bounds.apply(a2), to: out, channel: channel + 16, of: outputChannels)
                write(bounds.apply(b2), to: next, channel: channel + 16, of: outputChannels)
            }
            if blocks > 3 {
                write(bounds.apply(a3), to: out, channel: channel + 24, of: outputChannels)
                write(bounds.apply(b3), to: next, channel: channel + 24, of: outputChannels)
            }
            channel += 8 * blocks
        }
    }

    /// Depthwise convolution with multiplier 1: weights [kh][kw][channels], bias [channels].
    /// 3x3 windows (stride 1 or 2) keep their nine weight vectors in registers along
    /// the row, eight channels at a time, border pixels and rows included: a window row
    /// or column outside the input is skipped, so each sum adds the same terms in the
    /// same order as the general path. A channel count that is not a multiple of 8 runs
    /// its last block as a full vector too: its loads reach into the next pixel (or the
    /// slack after the arena and the constants) and only the real channels are stored.
    static func depthwiseConvolution(
        input: UnsafePointer<Float>, channels: Int, geometry g: WindowGeometry, rows outputRows: Range<Int>,
        weights: UnsafePointer<Float>, bias: UnsafePointer<Float>,
        output: UnsafeMutablePointer<Float>, bounds: Bounds
    ) {
        let w = g.window
        guard w.width == 3, w.height == 3, w.strideX <= 2 else {
            for y in outputRows {
                let rows = g.taps(output: y, stride: w.strideY, pad: g.padTop, kernel: w.height, input: g.inputHeight)
                for x in 0..<g.outputWidth {
                    depthwisePixel(
                        x: x, rows: rows, input: input, channels: channels, geometry: g, weights: weights,
                        bias: bias, output: output, bounds: bounds)
                }
            }
            return
        }
        let inside = g.insideColumns
        let (firstInside, endInside) = (inside.lowerBound, inside.upperBound)
        let rowStride = g.inputWidth * channels
        let span = depthwiseSpan(channels: channels, geometry: g)
        for y in outputRows {
            let rows = g.taps(output: y, stride: w.strideY, pad: g.padTop, kernel: w.height, input: g.inputHeight)
            let (hasTop, hasMiddle, hasBottom) = (rows.range.contains(0), rows.range.contains(1), rows.range.contains(2))
            let outputRow = output + y * g.outputWidth * channels
            // Column 0 of window row 0 for output pixel x (maybe outside the input: only taps inside are read).
            func corner(_ x: Int, _ channel: Int) -> UnsafePointer<Float> {
                input + (rows.origin * g.inputWidth + x * w.strideX - g.padLeft) * channels + channel
            }
            var spanStart = 0
            while spanStart < g.outputWidth {
                var spanEnd = (spanStart == 0 ? firstInside : spanStart) + span
                if spanEnd >= endInside { spanEnd = g.outputWidth }
                var channel = 0
                while channel < channels {
                    let count = channels - channel
                    let k = weights + channel
                    let w00 = load(k), w01 = load(k + channels), w02 = load(k + 2 * channels)
                    let w10 = load(k + 3 * channels), w11 = load(k + 4 * channels), w12 = load(k + 5 * channels)
                    let w20 = load(k + 6 * channels), w21 = load(k + 7 * channels), w22 = load(k + 8 * channels)
                    let b = load(bias + channel)
                    // A pixel whose window crosses the left or right edge: only its columns inside.
                    func edge(_ x: Int) {
                        let columns = g.taps(output: x, stride: w.strideX, pad: g.padLeft, kernel: 3, input: g.inputWidth).range
                        let top = corner(x, channel)
                        var sum = b
                        if hasTop { depthwiseTaps(top, channels: channels, columns: columns, w00, w01, w02, &sum) }
                        if hasMiddle { depthwiseTaps(top + rowStride, channels: channels, columns: columns, w10, w11, w12, &sum) }
                        if hasBottom { depthwiseTaps(top + 2 * rowStride, channels: channels, columns: columns, w20, w21, w22, &sum) }
                        store(bounds.apply(sum), outputRow + x * channels + channel, count: count)
                    }
                    var x = spanStart
                    while x < min(firstInside, spanEnd) { edge(x); x += 1 }
                    // Four pixels at a time: four independent sums in flight instead of one chain
                    // of nine, and the input columns they share loaded once.
                    while x + 4 <= min(spanEnd, endInside) {
                        let top = corner(x, channel)
                        var s0 = b, s1 = b, s2 = b, s3 = b
                        if hasTop { depthwiseRow(top, channels: channels, stride: w.strideX, w00, w01, w02, &s0, &s1, &s2, &s3) }
                        if hasMiddle {
                            depthwiseRow(top + rowStride, channels: channels, stride: w.strideX, w10, w11, w12, &s0, &s1, &s2, &s3)
                        }
                        if hasBottom {
                            depthwiseRow(top + 2 * rowStride, channels: channels, stride: w.strideX, w20, w21, w22, &s0, &s1, &s2, &s3)
                        }
                        let out = outputRow + x * channels + channel
                        store(bounds.apply(s0), out, count: count)
                        store(bounds.apply(s1), out + channels, count: count)
                        store(bounds.apply(s2), out + 2 * channels, count: count)
                        store(bounds.apply(s3), out + 3 * channels, count: count)
                        x += 4
                    }
                    while x < spanEnd { edge(x); x += 1 }
                    channel += 8
                }
                spanStart = spanEnd
            }
        }
    }

    /// How many output columns a 3x3 depthwise pass takes through all the eight-channel
    /// blocks before moving on: the whole row when the three input rows fit in a 32 KiB L1
    /// data cache (the cores these boards and servers have), else as many columns (a
    /// multiple of 4) as keep the rows' share under 12 KiB. Without the split, a 96-pixel
    /// row of 32 channels left L1 before the next block came back to it: 96x96x32 took
    /// 153 us, split 110 us.
    static func depthwiseSpan(channels: Int, geometry g: WindowGeometry) -> Int {
        let columnBytes = 3 * g.window.strideX * channels * MemoryLayout<Float>.size
        guard 3 * g.inputWidth * channels * MemoryLayout<Float>.size > 32 * 1024 else { return g.outputWidth }
        return min(g.outputWidth, max(4, 12 * 1024 / columnBytes & ~3))
    }

    /// The taps of one window row that lie in `columns` (0, 1, 2), added to `sum` in column order.
    @inline(__always) private static func depthwiseTaps(
        _ row: UnsafePointer<Float>, channels: Int, columns: Range<Int>, _ k0: Vector, _ k1: Vector, _ k2: Vector,
        _ sum: inout Vector
    ) {
        if columns.contains(0) { sum.addProduct(load(row), k0) }
        if columns.contains(1) { sum.addProduct(load(row + channels), k1) }
        if columns.contains(2) { sum.addProduct(load(row + 2 * channels), k2) }
    }

    /// One row of a 3x3 depthwise window for four neighbouring output pixels (stride 1 or 2).
    @inline(__always) private static func depthwiseRow(
        _ row: UnsafePointer<Float>, channels: Int, stride: Int, _ k0: Vector, _ k1: Vector, _ k2: Vector,
        _ s0: inout Vector, _ s1: inout Vector, _ s2: inout Vector, _ s3: inout Vector
    ) {
        if stride == 1 {
            let c0 = load(row), c1 = load(row + channels), c2 = load(row + 2 * channels)
            let c3 = load(row + 3 * channels), c4 = load(row + 4 * channels), c5 = load(row + 5 * channels)
            s0.addProduct(c0, k0); s1.addProduct(c1, k0); s2.addProduct(c2, k0); s3.addProduct(c3, k0)
            s0.addProduct(c1, k1); s1.addProduct(c2, k1); s2.addProduct(c3, k1); s3.addProduct(c4, k1)
            s0.addProduct(c2, k2); s1.addProduct(c3, k2); s2.addProduct(c4, k2); s3.addProduct(c5, k2)
        } else {
            let c0 = load(row), c2 = load(row + 2 * channels), c4 = load(row + 4 * channels), c6 = load(row + 6 * channels)
            s0.addProduct(c0, k0); s1.addProduct(c2, k0); s2.addProduct(c4, k0); s3.addProduct(c6, k0)
            let c1 = load(row + channels), c3 = load(row + 3 * channels), c5 = load(row + 5 * channels), c7 = load(row + 7 * channels)
            s0.addProduct(c1, k1); s1.addProduct(c3, k1); s2.addProduct(c5, k1); s3.addProduct(c7, k1)
            let c8 = load(row + 8 * channels)
            s0.addProduct(c2, k2); s1.addProduct(c4, k2); s2.addProduct(c6, k2); s3.addProduct(c8, k2)
        }
    }

    /// One output pixel of a depthwise convolution, any window.
    @inline(__always) private static func depthwisePixel(
        x: Int, rows: (origin: Int, range: Range<Int>), input: UnsafePointer<Float>, channels: Int,
        geometry g: WindowGeometry, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>,
        output: UnsafeMutablePointer<Float>, bounds: Bounds
    ) {
        let w = g.window
        let columns = g.taps(output: x, stride: w.strideX, pad: g.padLeft, kernel: w.width, input: g.inputWidth)
        let y = (rows.origin + g.padTop) / w.strideY
        let out = output + (y * g.outputWidth + x) * channels
        let origin = input + (rows.origin * g.inputWidth + columns.origin) * channels
        var channel = 0
        while channel + 8 <= channels {
            var sum = load(bias + channel)
            for ky in rows.range {
                for kx in columns.range {
                    sum.addProduct(
                        load(origin + (ky * g.inputWidth + kx) * channels + channel),
                        load(weights + (ky * w.width + kx) * channels + channel))
                }
            }
            store(bounds.apply(sum), out + channel)
            channel += 8
        }
        while channel < channels {
            var sum = bias[channel]
            for ky in rows.range {
                for kx in columns.range {
                    sum += origin[(ky * g.inputWidth + kx) * channels + channel] * weights[(ky * w.width + kx) * channels + channel]
                }
            }
            out[channel] = bounds.apply(sum)
            channel += 1
        }
    }

    /// Depthwise convolution with any multiplier: output channel c reads input channel c / multiplier.
    static func depthwiseConvolution(
        input: UnsafePointer<Float>, inputChannels: Int, multiplier: Int, geometry g: WindowGeometry,
        weights: UnsafePointer<Float>, bias: UnsafePointer<Float>,
        output: UnsafeMutablePointer<Float>, bounds: Bounds
    ) {
        let w = g.window
        let outputChannels = inputChannels * multiplier
        for y in 0..<g.outputHeight {
            let rows = g.taps(output: y, stride: w.strideY, pad: g.padTop, kernel: w.height, input: g.inputHeight)
            for x in 0..<g.outputWidth {
                let columns = g.taps(output: x, stride: w.strideX, pad: g.padLeft, kernel: w.width, input: g.inputWidth)
                for channel in 0..<outputChannels {
                    var sum = bias[channel]
                    for ky in rows.range {
                        for kx in columns.range {
                            let pixel = ((rows.origin + ky) * g.inputWidth + columns.origin + kx) * inputChannels
                            sum += input[pixel + channel / multiplier] * weights[(ky * w.width + kx) * outputChannels + channel]
                        }
                    }
                    output[(y * g.outputWidth + x) * outputChannels + channel] = bounds.apply(sum)
                }
            }
        }
    }

    /// Max pooling; cells outside the input are ignored, as in TFLite. Eight
    /// channels at a time; a channel tail loads eight lanes (reaching into the
    /// next pixel or the arena's slack) and stores only its own.
    static func maxPool(
        input: UnsafePointer<Float>, channels: Int, geometry g: WindowGeometry, rows outputRows: Range<Int>,
        output: UnsafeMutablePointer<Float>, bounds: Bounds
    ) {
        let w = g.window
        for y in outputRows {
            let rows = g.taps(output: y, stride: w.strideY, pad: g.padTop, kernel: w.height, input: g.inputHeight)
            for x in 0..<g.outputWidth {
                let columns = g.taps(output: x, stride: w.strideX, pad: g.padLeft, kernel: w.width, input: g.inputWidth)
                let out = output + (y * g.outputWidth + x) * channels
                let origin = input + (rows.origin * g.inputWidth + columns.origin) * channels
                var channel = 0
                if rows.range.count == 2, columns.range.count == 2, w.width == 2, w.height == 2 {
                    // The 2x2 window wholly inside (BlazeFace's shortcut pool): four loads a vector.
                    let top = origin, bottom = origin + g.inputWidth * channels
                    while channel + 8 <= channels {
                        let upper = sentry_max8(load(top + channel), load(top + channels + channel))
                        let lower = sentry_max8(load(bottom + channel), load(bottom + channels + channel))
                        store(bounds.apply(sentry_max8(upper, lower)), out + channel)
                        channel += 8
                    }
                }
                while channel < channels {
                    var largest = Vector(repeating: -.infinity)
                    for ky in rows.range {
                        for kx in columns.range {
                            largest = sentry_max8(largest, load(origin + (ky * g.inputWidth + kx) * channels + channel))
                        }
                    }
                    store(bounds.apply(largest), out + channel, count: channels - channel)
                    channel += 8
                }
            }
        }
    }

    /// Element-wise sum of two tensors of the same shape.
    static func add(
        _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int,
        output: UnsafeMutablePointer<Float>, bounds: Bounds
    ) {
        var index = 0
        while index + 8 <= count {
            store(bounds.apply(load(a + index) + load(b + index)), output + index)
            index += 8
        }
        while index < count {
            output[index] = bounds.apply(a[index] + b[index])
            index += 1
        }
    }

    /// Clamps every element (RELU and friends as separate operators).
    static func clamp(_ input: UnsafePointer<Float>, count: Int, output: UnsafeMutablePointer<Float>, bounds: Bounds) {
        var index = 0
        while index + 8 <= count {
            store(bounds.apply(load(input + index)), output + index)
            index += 8
        }
        while index < count {
            output[index] = bounds.apply(input[index])
            index += 1
        }
    }

    /// Bilinear resize of an NHWC tensor with TFLite's sampling rules
    /// (reference_ops::ResizeBilinear: align_corners, half_pixel_centers); output rows `rows` only.
    /// With an `addend` (a fused ADD, see `Planner.fusingAdds`), its values are added to the output's.
    static func resizeBilinear(
        input: UnsafePointer<Float>, inputWidth: Int, inputHeight: Int, channels: Int,
        output: UnsafeMutablePointer<Float>, addend: UnsafePointer<Float>? = nil,
        outputWidth: Int, outputHeight: Int, rows: Range<Int>,
        alignCorners: Bool, halfPixelCenters: Bool
    ) {
        let scaleY = resizeScale(inputHeight, outputHeight, alignCorners: alignCorners)
        let scaleX = resizeScale(inputWidth, outputWidth, alignCorners: alignCorners)
        for y in rows {
            let sy = resizeSample(y, scaleY, inputHeight, halfPixelCenters: halfPixelCenters)
            let dy = sy.position - Float(sy.lower)
            for x in 0..<outputWidth {
                let sx = resizeSample(x, scaleX, inputWidth, halfPixelCenters: halfPixelCenters)
                let dx = sx.position - Float(sx.lower)
                let topLeft = input + (sy.lower * inputWidth + sx.lower) * channels
                let topRight = input + (sy.lower * inputWidth + sx.upper) * channels
                let bottomLeft = input + (sy.upper * inputWidth + sx.lower) * channels
                let bottomRight = input + (sy.upper * inputWidth + sx.upper) * channels
                let offset = (y * outputWidth + x) * channels
                let out = output + offset
                // Eight channels at a time, the same products summed in the same order as one by one.
                let (above, below) = (Vector(repeating: 1 - dy), Vector(repeating: dy))
                let (left, right) = (Vector(repeating: 1 - dx), Vector(repeating: dx))
                var channel = 0
                while channel < channels {
                    var value =
                        load(topLeft + channel) * above * left + load(bottomLeft + channel) * below * left
                        + load(topRight + channel) * above * right + load(bottomRight + channel) * below * right
                    if let addend { value += load(addend + offset + channel) }
                    store(value, out + channel, count: channels - channel)
                    channel += 8
                }
            }
        }
    }

    /// Input pixels per output pixel of a bilinear resize along one axis.
    static func resizeScale(_ input: Int, _ output: Int, alignCorners: Bool) -> Float {
        alignCorners && output > 1 ? Float(input - 1) / Float(output - 1) : Float(input) / Float(output)
    }

    /// Where output position `value` samples the input along one axis, and the two input positions it blends.
    static func resizeSample(_ value: Int, _ scale: Float, _ size: Int, halfPixelCenters: Bool) -> (position: Float, lower: Int, upper: Int) {
        let position = halfPixelCenters ? (Float(value) + 0.5) * scale - 0.5 : Float(value) * scale
        return (position, max(Int(position.rounded(.down)), 0), min(Int(position.rounded(.up)), size - 1))
    }
}
