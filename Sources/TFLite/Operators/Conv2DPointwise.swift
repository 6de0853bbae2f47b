/// CONV_2D with a 1x1 window and stride 1: a matrix product per pixel, with a
/// fused ADD of a residual when the planner folded one in (`residualChannels` > 0)
/// and a fused PRELU (`hasSlopes`: the slopes follow the biases).
struct PointwiseConv2D: Kernel {
    let pixels: Int
    let inputChannels: Int
    let paddedOutputChannels: Int
    let outputChannels: Int
    let residualChannels: Int
    let hasSlopes: Bool

    /// Whether threads share it by output channels (sixteen at a time) rather than by
    /// pixels: when it has more channels than pixels (the deep layers), so that each
    /// thread reads only its channels' weights and runs whole pixel tiles.
    static func splitsChannels(pixels: Int, outputChannels: Int) -> Bool { outputChannels >= pixels }

    private var byChannels: Bool { Self.splitsChannels(pixels: pixels, outputChannels: outputChannels) }

    var operation: String { "CONV_2D 1x1" + (residualChannels > 0 ? " + ADD" : "") + (hasSlopes ? " + PRELU" : "") }
    var work: Int { pixels * inputChannels * outputChannels }
    var parallelRows: Int { byChannels ? (outputChannels + 15) / 16 : pixels }
    var outputPixels: Int { pixels }

    func run(_ share: Range<Int>, _ step: Step) {
        Self.pointwiseConvolution(
            input: step.inputs[0], pixels: byChannels ? 0..<pixels : share,
            channels: byChannels ? share.lowerBound * 16..<min(share.upperBound * 16, outputChannels) : nil,
            inputChannels: inputChannels, weights: step.weights!, bias: step.bias!,
            paddedOutputChannels: paddedOutputChannels, output: step.output, outputChannels: outputChannels,
            bounds: step.bounds, residual: residualChannels > 0 ? step.inputs[1] : nil, residualChannels: residualChannels,
            slopes: hasSlopes ? step.bias! + paddedOutputChannels : nil)
    }

    /// Split by pixels, a part reads its own rows of its input and residual.
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? { byChannels ? nil : rows }

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
    /// With `slopes` (a fused PRELU), a value below zero is then multiplied by its
    /// channel's slope.
    ///
    /// Only output channels `channels` (all if nil; a range starting at a multiple of 16)
    /// are computed: threads share a layer with few pixels and many channels that way.
    static func pointwiseConvolution(
        input: UnsafePointer<Float>, pixels: Range<Int>, channels: Range<Int>? = nil, inputChannels: Int,
        weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, paddedOutputChannels: Int,
        output: UnsafeMutablePointer<Float>, outputChannels: Int, bounds: Bounds,
        residual: UnsafePointer<Float>? = nil, residualChannels: Int = 0, slopes: UnsafePointer<Float>? = nil
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
                lanes: min(channelEnd - channel, wide ? 16 : 8), residual: residual, residualChannels: residualChannels,
                slopes: slopes.map { $0 + channel })
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
            // Sixteen channels: six pixels at a time, twelve sums in flight (eight leave the
            // multiply-adds waiting on their own latency).
            while wide, pixel + 6 <= end {
                var a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1
                var a30 = b0, a31 = b1, a40 = b0, a41 = b1, a50 = b0, a51 = b1
                let row0 = input + pixel * inputChannels, row1 = row0 + inputChannels
                let row2 = row1 + inputChannels, row3 = row2 + inputChannels
                let row4 = row3 + inputChannels, row5 = row4 + inputChannels
                var w = weights + channel
                for k in 0..<inputChannels {
                    let w0 = load(w), w1 = load(w + 8)
                    let x0 = Vector(repeating: row0[k]), x1 = Vector(repeating: row1[k])
                    a00.addProduct(x0, w0); a01.addProduct(x0, w1)
                    a10.addProduct(x1, w0); a11.addProduct(x1, w1)
                    let x2 = Vector(repeating: row2[k]), x3 = Vector(repeating: row3[k])
                    a20.addProduct(x2, w0); a21.addProduct(x2, w1)
                    a30.addProduct(x3, w0); a31.addProduct(x3, w1)
                    let x4 = Vector(repeating: row4[k]), x5 = Vector(repeating: row5[k])
                    a40.addProduct(x4, w0); a41.addProduct(x4, w1)
                    a50.addProduct(x5, w0); a51.addProduct(x5, w1)
                    w += stride
                }
                finish.write(a00, a01, pixel: pixel)
                finish.write(a10, a11, pixel: pixel &+ 1)
                finish.write(a20, a21, pixel: pixel &+ 2)
                finish.write(a30, a31, pixel: pixel &+ 3)
                finish.write(a40, a41, pixel: pixel &+ 4)
                finish.write(a50, a51, pixel: pixel &+ 5)
                pixel += 6
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
        /// A fused PRELU's slopes for the block's two vectors (the padding's are 0).
        let prelu: Bool
        let lowSlopes: Vector, highSlopes: Vector

        init(
            bounds: Bounds, output: UnsafeMutablePointer<Float>, outputChannels: Int, channel: Int, lanes: Int,
            residual: UnsafePointer<Float>?, residualChannels: Int, slopes: UnsafePointer<Float>?
        ) {
            self.bounds = bounds
            self.output = output + channel
            self.outputChannels = outputChannels
            self.lanes = lanes
            low = ResidualHalf(residual, channels: residualChannels, from: channel)
            high = ResidualHalf(residual, channels: residualChannels, from: channel + 8)
            prelu = slopes != nil
            lowSlopes = slopes.map { load($0) } ?? Vector()
            highSlopes = slopes.flatMap { lanes > 8 ? load($0 + 8) : nil } ?? Vector()
        }

        /// The activation, then the slopes below zero.
        @_transparent func activated(_ sum: Vector, _ slopes: Vector) -> Vector {
            let value = bounds.apply(sum)
            return prelu ? value.replacing(with: value * slopes, where: value .< 0) : value
        }

        /// Stores the block's channels of `pixel`: the first `lanes` of `first`, then of `second`.
        @_transparent func write(_ first: Vector, _ second: Vector = Vector(), pixel: Int) {
            let out = output + pixel &* outputChannels
            store(activated(low.added(to: first, pixel), lowSlopes), out, count: lanes)
            if lanes > 8 { store(activated(high.added(to: second, pixel), highSlopes), out + 8, count: lanes &- 8) }
        }
    }
}
