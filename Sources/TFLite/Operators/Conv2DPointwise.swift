import CVectorClamp

/// CONV_2D with a 1x1 window and stride 1: a matrix product per pixel, with a
/// fused ADD of a residual when the planner folded one in (`residualChannels` > 0)
/// and a fused PRELU (`hasSlopes`: the slopes follow the biases).
struct PointwiseConv2D: Kernel {
    /// The output's rows; `pixels` is a whole number of them.
    let rows: Int
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
    var partCount: Int { byChannels ? (outputChannels + 15) / 16 : pixels }
    var outputPixels: Int { pixels }
    /// Split by pixels, it reads its input and residual only where it writes; split by channels, it reads every pixel.
    var rowSharing: RowSharing? { byChannels ? nil : RowSharing(rows: rows, pointwiseReads: residualChannels > 0 ? [0, 1] : [0]) }

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
    /// to a multiple of 8, in blocks as `blocked` lays them out), plus bias. Two pixels
    /// by thirty-two channels per step while two blocks are left (`twoBlocks`), then
    /// four pixels by sixteen channels, and by two vectors whenever more than eight
    /// channels are left: a 12-channel layer is one pass over its input, not two of
    /// eight lanes each. (Measured in paired runs on a core shared with another
    /// guest: four pixels by sixteen channels ran 2-3% slower than two by thirty-two
    /// over a whole network; five or six pixels 4-7% slower, three 15% slower.)
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
        patches: Patches? = nil, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, paddedOutputChannels: Int,
        output: UnsafeMutablePointer<Float>, outputChannels: Int, bounds: Bounds,
        residual: UnsafePointer<Float>? = nil, residualChannels: Int = 0, slopes: UnsafePointer<Float>? = nil
    ) {
        if paddedOutputChannels == 1 {
            return pointwiseToOneChannel(
                input: input, pixels: pixels, inputChannels: inputChannels, weights: weights,
                bias: bias[0], output: output, bounds: bounds)
        }
        let patches = patches ?? Patches(pixelsOf: inputChannels)
        let channelEnd = channels?.upperBound ?? outputChannels
        var channel = channels?.lowerBound ?? 0
        while channel < channelEnd {
            if channelEnd - channel >= 32, inputChannels <= Self.pairedBlockInputs || pixels.count < 4 {
                let blockFinish = { (channel: Int) in
                    Finish(
                        bounds: bounds, output: output, outputChannels: outputChannels, channel: channel, lanes: 16,
                        residual: residual, residualChannels: residualChannels, slopes: slopes.map { $0 + channel })
                }
                twoBlocks(
                    input: input, pixels: pixels, inputChannels: inputChannels, patches: patches,
                    weights: weights + channel &* inputChannels, bias: bias + channel, finish: blockFinish(channel), blockFinish(channel + 16))
                channel += 32
                continue
            }
            let wide = channelEnd - channel > 8
            let width = wide ? 16 : 8
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
                let (o0, o1, o2, o3) = (patches.origin(pixel), patches.origin(pixel &+ 1), patches.origin(pixel &+ 2), patches.origin(pixel &+ 3))
                let (o4, o5, o6, o7) = (patches.origin(pixel &+ 4), patches.origin(pixel &+ 5), patches.origin(pixel &+ 6), patches.origin(pixel &+ 7))
                var w = weights + channel &* inputChannels
                for row in 0..<patches.runs {
                    let run = row &* patches.runStride
                    let row0 = input + (o0 &+ run), row1 = input + (o1 &+ run), row2 = input + (o2 &+ run), row3 = input + (o3 &+ run)
                    let row4 = input + (o4 &+ run), row5 = input + (o5 &+ run), row6 = input + (o6 &+ run), row7 = input + (o7 &+ run)
                    for k in 0..<patches.runLength {
                        let w0 = load(w)
                        a0.addProduct(Vector(repeating: row0[k]), w0)
                        a1.addProduct(Vector(repeating: row1[k]), w0)
                        a2.addProduct(Vector(repeating: row2[k]), w0)
                        a3.addProduct(Vector(repeating: row3[k]), w0)
                        a4.addProduct(Vector(repeating: row4[k]), w0)
                        a5.addProduct(Vector(repeating: row5[k]), w0)
                        a6.addProduct(Vector(repeating: row6[k]), w0)
                        a7.addProduct(Vector(repeating: row7[k]), w0)
                        w += width
                    }
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
                let (o0, o1, o2, o3) = (patches.origin(pixel), patches.origin(pixel &+ 1), patches.origin(pixel &+ 2), patches.origin(pixel &+ 3))
                var w = weights + channel &* inputChannels
                for row in 0..<patches.runs {
                    let run = row &* patches.runStride
                    let row0 = input + (o0 &+ run), row1 = input + (o1 &+ run), row2 = input + (o2 &+ run), row3 = input + (o3 &+ run)
                    if wide {
                        for k in 0..<patches.runLength {
                            let w0 = load(w), w1 = load(w + 8)
                            let x0 = Vector(repeating: row0[k]), x1 = Vector(repeating: row1[k])
                            let x2 = Vector(repeating: row2[k]), x3 = Vector(repeating: row3[k])
                            a00.addProduct(x0, w0); a01.addProduct(x0, w1)
                            a10.addProduct(x1, w0); a11.addProduct(x1, w1)
                            a20.addProduct(x2, w0); a21.addProduct(x2, w1)
                            a30.addProduct(x3, w0); a31.addProduct(x3, w1)
                            w += width
                        }
                    } else {
                        for k in 0..<patches.runLength {
                            let w0 = load(w)
                            a00.addProduct(Vector(repeating: row0[k]), w0)
                            a10.addProduct(Vector(repeating: row1[k]), w0)
                            a20.addProduct(Vector(repeating: row2[k]), w0)
                            a30.addProduct(Vector(repeating: row3[k]), w0)
                            w += width
                        }
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
                let origin = patches.origin(pixel)
                var w = weights + channel &* inputChannels
                for row in 0..<patches.runs {
                    let run = row &* patches.runStride
                    let row = input + (origin &+ run)
                    for k in 0..<patches.runLength {
                        let x = Vector(repeating: row[k])
                        a0.addProduct(x, load(w))
                        if wide { a1.addProduct(x, load(w + 8)) }
                        w += width
                    }
                }
                finish.write(a0, a1, pixel: pixel)
                pixel += 1
            }
            channel += wide ? 16 : 8
        }
    }

    /// The most input values per output for which `twoBlocks` runs: two blocks' weights
    /// (`inputChannels` x 32 floats, 16 KiB at 128) then fill at most half of a 32 KiB L1
    /// data cache. Past that (the iris model's 2x2 stride-2 layers, 256 and 512), every
    /// pixel pair read weights L1 no longer held, and four pixels by one block ran faster.
    static let pairedBlockInputs = 128

    /// Two blocks of sixteen channels (`weights` and `bias` at the first block's), two
    /// pixels at a time: eight sums in flight from two broadcasts and four weight loads
    /// per input value, where four pixels by one block take four broadcasts and two loads.
    @inline(__always) private static func twoBlocks(
        input: UnsafePointer<Float>, pixels: Range<Int>, inputChannels: Int, patches: Patches,
        weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, finish first: Finish, _ second: Finish
    ) {
        let b0 = load(bias), b1 = load(bias + 8), b2 = load(bias + 16), b3 = load(bias + 24)
        var pixel = pixels.lowerBound
        while pixel < pixels.upperBound {
            let pair = pixel &+ 1 < pixels.upperBound
            var a0 = b0, a1 = b1, a2 = b2, a3 = b3, c0 = b0, c1 = b1, c2 = b2, c3 = b3
            // A lone last pixel reads its own row twice and keeps one result.
            let o0 = patches.origin(pixel), o1 = pair ? patches.origin(pixel &+ 1) : o0
            var w = weights, v = weights + 16 &* inputChannels
            for row in 0..<patches.runs {
                let run = row &* patches.runStride
                let row0 = input + (o0 &+ run), row1 = input + (o1 &+ run)
                for k in 0..<patches.runLength {
                    let w0 = load(w), w1 = load(w + 8), w2 = load(v), w3 = load(v + 8)
                    let x0 = Vector(repeating: row0[k]), x1 = Vector(repeating: row1[k])
                    a0.addProduct(x0, w0); a1.addProduct(x0, w1); a2.addProduct(x0, w2); a3.addProduct(x0, w3)
                    c0.addProduct(x1, w0); c1.addProduct(x1, w1); c2.addProduct(x1, w2); c3.addProduct(x1, w3)
                    w += 16
                    v += 16
                }
            }
            first.write(a0, a1, pixel: pixel)
            second.write(a2, a3, pixel: pixel)
            if pair {
                first.write(c0, c1, pixel: pixel &+ 1)
                second.write(c2, c3, pixel: pixel &+ 1)
            }
            pixel &+= 2
        }
    }

    /// Where each output pixel's inputs lie, in the order of the weights' rows: runs of
    /// `runLength` floats, `runStride` apart, from `origin(pixel)` on. A 1x1 convolution's
    /// pixel is one run, its channels. Any other window that lies inside the input is one
    /// run per window row, so it is a matrix product too, with each block's weights in
    /// L1: as a general convolution, every pair of pixels read all of the weights (64-256
    /// KB in the iris model's 2x2 stride-2 layers), and a first layer's sixteen channels
    /// kept only four sums in flight.
    struct Patches {
        let runs: Int, runLength: Int, runStride: Int
        /// Output pixels per output row, when they do not follow each other in the input.
        let outputWidth: Int?
        /// From one output pixel's first input to the next one's on the same output row, and from one output row's to the next's.
        let pixelStep: Int, lineStep: Int
        /// Where output pixel 0's window would start: before the input when it is padded.
        let start: Int

        /// A 1x1 convolution, stride 1.
        init(pixelsOf channels: Int) {
            (runs, runLength, runStride, outputWidth, pixelStep, lineStep, start) = (1, channels, 0, nil, channels, 0, 0)
        }

        /// The windows of a convolution: `origin` is right only for those inside the input (see `WindowGeometry.insideRows`).
        init(windows g: WindowGeometry, channels: Int) {
            let rowLength = g.inputWidth * channels
            (runs, runLength, runStride) = (g.window.height, g.window.width * channels, rowLength)
            outputWidth = g.outputWidth
            pixelStep = g.window.strideX * channels
            lineStep = g.window.strideY * rowLength
            start = -(g.padTop * rowLength + g.padLeft * channels)
        }

        @inline(__always) func origin(_ pixel: Int) -> Int {
            guard let outputWidth else { return pixel &* pixelStep }
            return start &+ (pixel / outputWidth) &* lineStep &+ (pixel % outputWidth) &* pixelStep
        }
    }

    /// The weights `[inputChannels][paddedOutputChannels]` in the order the kernel reads
    /// them: blocks of sixteen output channels (eight for a last block of eight or fewer),
    /// each block's `[inputChannels][16]` contiguous from `channel * inputChannels` on.
    /// A block's weights then stream from memory in order: read a row at a time across
    /// the whole matrix, each block touched a cache line per input channel in strides
    /// the prefetcher followed late, and the iris model's 2.6 MB of weights do not stay
    /// in a 1 MB L2 from one run to the next.
    static func blocked(_ weights: [Float], inputChannels: Int, outputChannels: Int, paddedOutputChannels: Int) -> [Float] {
        var blocked = [Float](repeating: 0, count: weights.count)
        var channel = 0
        while channel < outputChannels {
            let width = outputChannels - channel > 8 ? 16 : 8
            for k in 0..<inputChannels {
                for lane in 0..<width {
                    blocked[channel * inputChannels + k * width + lane] = weights[k * paddedOutputChannels + channel + lane]
                }
            }
            channel += width
        }
        return blocked
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

        /// The activation, or the slopes below zero: the planner fuses a PRELU only into a
        /// convolution without an activation, so its bounds need no clamp.
        @_transparent func activated(_ sum: Vector, _ slopes: Vector) -> Vector {
            prelu ? sentry_prelu8(sum, slopes) : bounds.apply(sum)
        }

        /// Stores the block's channels of `pixel`: the first `lanes` of `first`, then of `second`.
        @_transparent func write(_ first: Vector, _ second: Vector = Vector(), pixel: Int) {
            let out = output + pixel &* outputChannels
            store(activated(low.added(to: first, pixel), lowSlopes), out, count: lanes)
            if lanes > 8 { store(activated(high.added(to: second, pixel), highSlopes), out + 8, count: lanes &- 8) }
        }
    }
}
