/// DEPTHWISE_CONV_2D: each channel convolved with its own window. Multiplier 1 (every
/// BlazeFace layer) has the fast kernel; any other multiplier runs `DepthwiseConv2DMultiplier`.
struct DepthwiseConv2D: WindowedKernel {
    let geometry: WindowGeometry
    let channels: Int

    static func plan(_ op: OperatorDescription, window: Window, multiplier: Int, activation: Activation, _ planner: inout Planner)
        throws(ModelError) -> PreparedOperator
    {
        try planner.requireInputs(op, 2)
        let (height, width, inputChannels) = try planner.imageShape(op.inputs[0], "DEPTHWISE_CONV_2D")
        let filterShape = try planner.shape(of: op.inputs[1])
        guard multiplier >= 1, filterShape.count == 4, filterShape[0] == 1, filterShape[3] == inputChannels * multiplier else {
            throw planner.fail(
                "DEPTHWISE_CONV_2D filter \(filterShape) does not fit input \(try planner.shape(of: op.inputs[0])) with multiplier \(multiplier)")
        }
        var full = window
        (full.width, full.height) = (filterShape[2], filterShape[1])
        let geometry = WindowGeometry(inputWidth: width, inputHeight: height, window: full)
        try planner.expect([1, geometry.outputHeight, geometry.outputWidth, filterShape[3]], from: op)
        let kernel: any Kernel =
            multiplier == 1
            ? DepthwiseConv2D(geometry: geometry, channels: inputChannels)
            : DepthwiseConv2DMultiplier(geometry: geometry, inputChannels: inputChannels, multiplier: multiplier)
        return PreparedOperator(
            kernel: kernel, bounds: Bounds(activation),
            weights: planner.store(try planner.constant(op.inputs[1], "DEPTHWISE_CONV_2D filter")),
            bias: planner.store(try planner.biasValues(op, count: filterShape[3], padded: filterShape[3])), reads: [op.inputs[0]])
    }

    var operation: String { "DEPTHWISE_CONV_2D \(geometry.name)" }
    var work: Int { geometry.windowCells * channels }

    func run(_ share: Range<Int>, _ step: Step) {
        Self.depthwiseConvolution(
            input: step.inputs[0], channels: channels, geometry: geometry, rows: share, weights: step.weights!,
            bias: step.bias!, output: step.output, bounds: step.bounds)
    }

    /// Depthwise convolution with multiplier 1: weights [kh][kw][channels], bias [channels].
    /// 3x3 windows (stride 1 or 2) run along the row eight channels at a time, in groups
    /// of eight pixels (stride 1) or four, border pixels and rows included: a window row
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
                    // The pixels whose windows lie inside the input, in groups: each group's
                    // input columns are loaded once for all of its sums.
                    let (insideStart, insideEnd) = (x, min(spanEnd, endInside))
                    // A group may end at the last inside pixel, overlapping the group before (those
                    // pixels are written twice, with the same values): for the last five to seven
                    // pixels, one group of eight; for the last two or three, one of four. One pixel
                    // alone, through `edge`, costs two to three times one in a group.
                    func anotherGroup(of size: Int, forAtLeast fewest: Int) -> Bool {
                        insideEnd - x >= size || (insideEnd - x >= fewest && insideEnd - insideStart >= size)
                    }
                    // Stride 1: eight pixels at a time, eight sums in flight. With four, each sum's
                    // chain of nine multiply-adds (four cycles each) left the unit half idle.
                    while w.strideX == 1, anotherGroup(of: 8, forAtLeast: 5) {
                        x = min(x, insideEnd - 8)
                        let top = corner(x, channel)
                        var sums = (b, b, b, b, b, b, b, b)
                        if hasTop { depthwiseRowOfEight(top, channels: channels, weights: k, &sums) }
                        if hasMiddle { depthwiseRowOfEight(top + rowStride, channels: channels, weights: k + 3 * channels, &sums) }
                        if hasBottom { depthwiseRowOfEight(top + 2 * rowStride, channels: channels, weights: k + 6 * channels, &sums) }
                        let out = outputRow + x * channels + channel
                        store(bounds.apply(sums.0), out, count: count)
                        store(bounds.apply(sums.1), out + channels, count: count)
                        store(bounds.apply(sums.2), out + 2 * channels, count: count)
                        store(bounds.apply(sums.3), out + 3 * channels, count: count)
                        store(bounds.apply(sums.4), out + 4 * channels, count: count)
                        store(bounds.apply(sums.5), out + 5 * channels, count: count)
                        store(bounds.apply(sums.6), out + 6 * channels, count: count)
                        store(bounds.apply(sums.7), out + 7 * channels, count: count)
                        x += 8
                    }
                    // Then four at a time.
                    while anotherGroup(of: 4, forAtLeast: 2) {
                        x = min(x, insideEnd - 4)
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

    /// One row of a 3x3 stride-1 depthwise window for eight neighbouring output pixels. The
    /// row's three weights are loaded here rather than kept in registers for all three rows:
    /// eight sums and nine weights do not fit in sixteen vector registers, and the compiler
    /// then kept sums on the stack.
    @inline(__always) private static func depthwiseRowOfEight(
        _ row: UnsafePointer<Float>, channels: Int, weights: UnsafePointer<Float>,
        _ sums: inout (Vector, Vector, Vector, Vector, Vector, Vector, Vector, Vector)
    ) {
        let k0 = load(weights), k1 = load(weights + channels), k2 = load(weights + 2 * channels)
        let c0 = load(row), c1 = load(row + channels), c2 = load(row + 2 * channels), c3 = load(row + 3 * channels)
        let c4 = load(row + 4 * channels), c5 = load(row + 5 * channels), c6 = load(row + 6 * channels)
        let c7 = load(row + 7 * channels), c8 = load(row + 8 * channels), c9 = load(row + 9 * channels)
        sums.0.addProduct(c0, k0); sums.0.addProduct(c1, k1); sums.0.addProduct(c2, k2)
        sums.1.addProduct(c1, k0); sums.1.addProduct(c2, k1); sums.1.addProduct(c3, k2)
        sums.2.addProduct(c2, k0); sums.2.addProduct(c3, k1); sums.2.addProduct(c4, k2)
        sums.3.addProduct(c3, k0); sums.3.addProduct(c4, k1); sums.3.addProduct(c5, k2)
        sums.4.addProduct(c4, k0); sums.4.addProduct(c5, k1); sums.4.addProduct(c6, k2)
        sums.5.addProduct(c5, k0); sums.5.addProduct(c6, k1); sums.5.addProduct(c7, k2)
        sums.6.addProduct(c6, k0); sums.6.addProduct(c7, k1); sums.6.addProduct(c8, k2)
        sums.7.addProduct(c7, k0); sums.7.addProduct(c8, k1); sums.7.addProduct(c9, k2)
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
}

/// DEPTHWISE_CONV_2D with a multiplier above 1: output channel c reads input channel
/// c / multiplier. No BlazeFace layer has one; the plain loop keeps such models running.
struct DepthwiseConv2DMultiplier: Kernel {
    let geometry: WindowGeometry
    let inputChannels: Int
    let multiplier: Int

    var operation: String { "DEPTHWISE_CONV_2D \(geometry.name)" }
    var outputPixels: Int { geometry.outputPixels }
    /// One part: it reads all of its input.
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? { nil }

    func run(_ share: Range<Int>, _ step: Step) {
        Self.depthwiseConvolution(
            input: step.inputs[0], inputChannels: inputChannels, multiplier: multiplier,
            geometry: geometry, weights: step.weights!, bias: step.bias!, output: step.output, bounds: step.bounds)
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
}
