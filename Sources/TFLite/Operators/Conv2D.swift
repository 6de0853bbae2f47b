import CVectorClamp

/// CONV_2D: a 1x1 convolution with stride 1 (BlazeFace's pointwise layers, see
/// `PointwiseConv2D`) or any other window (`Conv2D`): its windows inside the input run
/// through the same matrix product (see `PointwiseConv2D.Patches`), the ones that cross
/// the border through the general kernel. Weights are repacked once,
/// [kh][kw][inputChannels][outputChannels padded to whole vectors], so that a kernel
/// loads eight output channels' weights for one input value in one vector; the matrix
/// product takes them in blocks of sixteen channels (`PointwiseConv2D.blocked`), and
/// a convolution with windows of both kinds keeps both layouts.
struct Conv2D: WindowedKernel {
    let geometry: WindowGeometry
    let inputChannels: Int
    let paddedOutputChannels: Int
    let outputChannels: Int
    /// A fused PRELU: its slopes follow the biases.
    let hasSlopes: Bool
    /// Where the general kernel's weights start: after the matrix product's blocks when
    /// some windows cross the border, 0 when none lie inside (nil when none cross).
    let generalWeights: Int?

    /// Checks the filter against the input, repacks the weights and picks the kernel.
    /// A fourth input is a residual, a fused ADD (see `Planner.fusingAdds`); a fifth,
    /// a fused PRELU's slopes (`Planner.fusingPrelus`), kept after the biases.
    static func plan(_ op: OperatorDescription, window: Window, activation: Activation, _ planner: inout Planner) throws(ModelError)
        -> PreparedOperator
    {
        try planner.requireInputs(op, 2)
        let (height, width, inputChannels) = try planner.imageShape(op.inputs[0], "CONV_2D")
        let filterShape = try planner.shape(of: op.inputs[1])
        guard filterShape.count == 4, filterShape[3] == inputChannels else {
            throw planner.fail("CONV_2D filter \(filterShape) does not fit input \(try planner.shape(of: op.inputs[0]))")
        }
        let (outputChannels, kernelHeight, kernelWidth) = (filterShape[0], filterShape[1], filterShape[2])
        var full = window
        (full.width, full.height) = (kernelWidth, kernelHeight)
        let geometry = WindowGeometry(inputWidth: width, inputHeight: height, window: full)
        try planner.expect([1, geometry.outputHeight, geometry.outputWidth, outputChannels], from: op)
        let pointwise = kernelWidth == 1 && kernelHeight == 1 && window.strideX == 1 && window.strideY == 1
        // Output channels padded to whole vectors; a classifier head's one channel
        // (no residual) keeps its weights contiguous for its own kernel.
        let slopes = try op.fused.slopes.map { tensor throws(ModelError) in try planner.constant(tensor, "PRELU slopes") }
        if let slopes, slopes.count != outputChannels {
            throw planner.fail("a PRELU of \(slopes.count) slopes is fused only into a convolution to as many channels")
        }
        let padded = pointwise && outputChannels == 1 && op.fused.residual == nil ? 1 : (outputChannels + 7) / 8 * 8
        let filter = try planner.constant(op.inputs[1], "CONV_2D filter")
        var packed = [Float](repeating: 0, count: kernelHeight * kernelWidth * inputChannels * padded)
        for o in 0..<outputChannels {
            for tap in 0..<(kernelHeight * kernelWidth) {
                for i in 0..<inputChannels {
                    packed[(tap * inputChannels + i) * padded + o] = filter[(o * kernelHeight * kernelWidth + tap) * inputChannels + i]
                }
            }
        }
        let inside = geometry.insideRows.count * geometry.insideColumns.count
        // The general kernel runs the pixels whose windows cross the border, and all of them when the weights stay unblocked.
        let general = padded == 1 || inside < geometry.outputPixels
        var weights = packed
        if padded > 1, inside > 0 {
            weights = PointwiseConv2D.blocked(
                packed, inputChannels: kernelHeight * kernelWidth * inputChannels, outputChannels: outputChannels,
                paddedOutputChannels: padded)
            if general { weights += packed }
        }
        var prepared = PreparedOperator(
            kernel: Conv2D(
                geometry: geometry, inputChannels: inputChannels, paddedOutputChannels: padded, outputChannels: outputChannels,
                hasSlopes: slopes != nil,
                generalWeights: general ? weights.count - packed.count : nil),
            bounds: Bounds(activation), weights: planner.store(weights),
            bias: planner.store(
                try planner.biasValues(op, count: outputChannels, padded: padded)
                    + (slopes.map { $0 + [Float](repeating: 0, count: padded - outputChannels) } ?? [])),
            reads: [op.inputs[0]])
        guard pointwise else { return prepared }
        var residualChannels = 0
        if let residualTensor = op.fused.residual {
            let residual = try planner.shape(of: residualTensor)
            let expected = planner.outputShape(of: op)
            guard residual.count == 4, residual.dropLast() == expected.dropLast(), residual[3] <= outputChannels else {
                throw planner.fail("a residual of shape \(residual) cannot be added to \(planner.outputName(of: op))")
            }
            residualChannels = residual[3]
            prepared.reads.append(residualTensor)
        }
        prepared.kernel = PointwiseConv2D(
            rows: height, pixels: height * width, inputChannels: inputChannels, paddedOutputChannels: padded,
            outputChannels: outputChannels, residualChannels: residualChannels, hasSlopes: slopes != nil)
        return prepared
    }

    var operation: String { "CONV_2D \(geometry.name)" + (hasSlopes ? " + PRELU" : "") }
    var work: Int { geometry.windowCells * inputChannels * outputChannels }

    /// Row by row: the windows inside the input as a matrix product, the rest (the border
    /// rows, and the columns before and after the inside ones) through the general kernel.
    func run(_ share: Range<Int>, _ step: Step) {
        let g = geometry
        let slopes = hasSlopes ? step.bias! + paddedOutputChannels : nil
        let finish = Finish(bounds: step.bounds, slopes: slopes)
        func general(_ rows: Range<Int>, _ columns: Range<Int>) {
            guard let generalWeights, !rows.isEmpty, !columns.isEmpty else { return }
            Self.convolution(
                input: step.inputs[0], inputChannels: inputChannels, geometry: g, rows: rows, columns: columns,
                weights: step.weights! + generalWeights, bias: step.bias!, paddedOutputChannels: paddedOutputChannels,
                output: step.output, outputChannels: outputChannels, finish: finish)
        }
        let insideRows = g.insideRows.clamped(to: share), columns = g.insideColumns
        guard paddedOutputChannels > 1, !insideRows.isEmpty, !columns.isEmpty else { return general(share, 0..<g.outputWidth) }
        let patches = PointwiseConv2D.Patches(windows: g, channels: inputChannels)
        func matrixProduct(_ pixels: Range<Int>) {
            PointwiseConv2D.pointwiseConvolution(
                input: step.inputs[0], pixels: pixels, inputChannels: g.window.width * g.window.height * inputChannels,
                patches: patches, weights: step.weights!, bias: step.bias!, paddedOutputChannels: paddedOutputChannels,
                output: step.output, outputChannels: outputChannels, bounds: step.bounds, slopes: slopes)
        }
        general(share.lowerBound..<insideRows.lowerBound, 0..<g.outputWidth)
        if columns.count == g.outputWidth {
            // Whole rows inside (a window that tiles its input): their pixels in one pass.
            matrixProduct(insideRows.lowerBound * g.outputWidth..<insideRows.upperBound * g.outputWidth)
        } else {
            for y in insideRows {
                general(y..<y + 1, 0..<columns.lowerBound)
                matrixProduct(y * g.outputWidth + columns.lowerBound..<y * g.outputWidth + columns.upperBound)
                general(y..<y + 1, columns.upperBound..<g.outputWidth)
            }
        }
        general(insideRows.upperBound..<share.upperBound, 0..<g.outputWidth)
    }

    /// How sums become outputs: the activation's bounds, or a fused PRELU's slopes (the
    /// planner fuses a PRELU only into a convolution without an activation).
    struct Finish {
        let bounds: Bounds
        let slopes: UnsafePointer<Float>?

        /// Stores eight channels from `channel` on, fewer at the end of the row, none past it.
        @inline(__always) func write(_ sum: Vector, to pixel: UnsafeMutablePointer<Float>, channel: Int, of channels: Int) {
            let value = slopes.map { sentry_prelu8(sum, load($0 + channel)) } ?? bounds.apply(sum)
            if channels - channel >= 8 { store(value, pixel + channel) } else if channel < channels { store(value, pixel + channel, count: channels - channel) }
        }
    }

    /// A general convolution with repacked weights [kh][kw][inputChannels][paddedOutputChannels]:
    /// per output pixel, each input value is broadcast once into up to 32 channels' sums.
    static func convolution(
        input: UnsafePointer<Float>, inputChannels: Int, geometry g: WindowGeometry, rows outputRows: Range<Int>,
        columns: Range<Int>, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, paddedOutputChannels: Int,
        output: UnsafeMutablePointer<Float>, outputChannels: Int, finish: Finish
    ) {
        let w = g.window
        let inside = g.insideColumns
        let (firstInside, endInside) = (inside.lowerBound, inside.upperBound)
        for y in outputRows {
            let rows = g.taps(output: y, stride: w.strideY, pad: g.padTop, kernel: w.height, input: g.inputHeight)
            var x = columns.lowerBound
            while x < columns.upperBound {
                // Two pixels at a time inside: each weight vector loaded once for both,
                // and twice the independent sums in flight.
                if x >= firstInside, x + 2 <= min(endInside, columns.upperBound) {
                    convolutionPair(
                        input: input, inputChannels: inputChannels, geometry: g, rows: rows, x: x, y: y,
                        weights: weights, bias: bias, paddedOutputChannels: paddedOutputChannels,
                        output: output, outputChannels: outputChannels, finish: finish)
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
                    finish.write(s0, to: out, channel: channel, of: outputChannels)
                    if blocks > 1 { finish.write(s1, to: out, channel: channel + 8, of: outputChannels) }
                    if blocks > 2 { finish.write(s2, to: out, channel: channel + 16, of: outputChannels) }
                    if blocks > 3 { finish.write(s3, to: out, channel: channel + 24, of: outputChannels) }
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
        output: UnsafeMutablePointer<Float>, outputChannels: Int, finish: Finish
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
            finish.write(a0, to: out, channel: channel, of: outputChannels)
            finish.write(b0, to: next, channel: channel, of: outputChannels)
            if blocks > 1 {
                finish.write(a1, to: out, channel: channel + 8, of: outputChannels)
                finish.write(b1, to: next, channel: channel + 8, of: outputChannels)
            }
            if blocks > 2 {
                finish.write(a2, to: out, channel: channel + 16, of: outputChannels)
                finish.write(b2, to: next, channel: channel + 16, of: outputChannels)
            }
            if blocks > 3 {
                finish.write(a3, to: out, channel: channel + 24, of: outputChannels)
                finish.write(b3, to: next, channel: channel + 24, of: outputChannels)
            }
            channel += 8 * blocks
        }
    }
}
