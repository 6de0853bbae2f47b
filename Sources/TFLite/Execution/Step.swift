/// Where a tensor lives: in the activation arena or among the constants.
enum Place: Equatable {
    case arena(Int)
    case constant(Int)
}

/// One prepared operator with its places resolved to pointers.
struct Step {
    enum Kind {
        /// A 1x1 convolution; with `residualChannels` > 0, also a fused ADD of `inputs[1]` (see `Planner.fusingAdds`).
        case pointwise(pixels: Int, inputChannels: Int, paddedOutputChannels: Int, outputChannels: Int, residualChannels: Int)
        case convolution(WindowGeometry, inputChannels: Int, paddedOutputChannels: Int, outputChannels: Int)
        case depthwise(WindowGeometry, channels: Int)
        case depthwiseMultiplier(WindowGeometry, inputChannels: Int, multiplier: Int)
        case maxPool(WindowGeometry, channels: Int)
        case add(count: Int)
        case clamp(count: Int)
        case copy(count: Int)
        /// Zero padding: the output is cleared, then each input row of `rowLength` floats is copied.
        case pad(inputShape: [Int], outputShape: [Int], before: [Int])
        /// Bilinear resize; with a second input, also a fused ADD of it (see `Planner.fusingAdds`).
        case resize(
            inputWidth: Int, inputHeight: Int, channels: Int, outputWidth: Int, outputHeight: Int,
            alignCorners: Bool, halfPixelCenters: Bool)
        /// Concatenation: `outer` blocks, each the inputs' slices of the given lengths in turn.
        case concatenate(outer: Int, slices: [Int])
    }

    var kind: Kind
    var bounds: Bounds
    var inputs: [UnsafeMutablePointer<Float>]
    var output: UnsafeMutablePointer<Float>
    /// Weights and bias for convolutions.
    var weights: UnsafeMutablePointer<Float>?
    var bias: UnsafeMutablePointer<Float>?
    /// Floats of each input and of the output: where the step reads and writes.
    var inputCounts: [Int]
    var outputCount: Int

    /// The floats it writes.
    var written: Range<UnsafeMutablePointer<Float>> { output..<output + outputCount }

    /// How many parts (rows, pixels, blocks of 16 output channels or of `addBlock` values) the
    /// step can be split into for threads; 1 if it cannot.
    var parallelRows: Int {
        switch kind {
        case let .pointwise(pixels, _, _, outputChannels, _):
            Self.splitsChannels(pixels: pixels, outputChannels: outputChannels) ? (outputChannels + 15) / 16 : pixels
        case let .convolution(geometry, _, _, _), let .depthwise(geometry, _), let .maxPool(geometry, _): geometry.outputHeight
        case let .resize(_, _, _, _, outputHeight, _, _): outputHeight
        case let .add(count): max(1, count / Self.addBlock)
        default: 1
        }
    }

    /// Pixels of the output map, for the kernels that split by rows or pixels (`Int.max` for the others).
    var outputPixels: Int {
        switch kind {
        case let .pointwise(pixels, _, _, _, _): pixels
        case let .convolution(geometry, _, _, _), let .depthwise(geometry, _), let .depthwiseMultiplier(geometry, _, _),
            let .maxPool(geometry, _):
            geometry.outputWidth * geometry.outputHeight
        case let .resize(_, _, _, outputWidth, outputHeight, _, _): outputWidth * outputHeight
        default: .max
        }
    }

    /// Values of an ADD per part when threads share it.
    static let addBlock = 1024

    /// Whether threads share a 1x1 convolution by output channels (sixteen at a time)
    /// rather than by pixels: when it has more channels than pixels (the deep layers),
    /// so that each thread reads only its channels' weights and runs whole pixel tiles.
    static func splitsChannels(pixels: Int, outputChannels: Int) -> Bool { outputChannels >= pixels }

    /// The operator as TFLite names it, with its window and what was folded into it.
    var operation: String {
        switch kind {
        case let .pointwise(_, _, _, _, residualChannels): residualChannels > 0 ? "CONV_2D 1x1 + ADD" : "CONV_2D 1x1"
        case let .convolution(g, _, _, _): "CONV_2D \(g.window.width)x\(g.window.height)/\(g.window.strideX)"
        case let .depthwise(g, _), let .depthwiseMultiplier(g, _, _):
            "DEPTHWISE_CONV_2D \(g.window.width)x\(g.window.height)/\(g.window.strideX)"
        case .maxPool: "MAX_POOL_2D"
        case .add: "ADD"
        case .clamp: "RELU"
        case .copy: "RESHAPE"
        case .pad: "PAD"
        case .resize: inputs.count > 1 ? "RESIZE_BILINEAR + ADD" : "RESIZE_BILINEAR"
        case .concatenate: "CONCATENATION"
        }
    }

    /// Multiply-adds the step does (or as many other operations), to judge whether splitting it pays for the hand-over.
    var work: Int {
        switch kind {
        case let .pointwise(pixels, inputChannels, _, outputChannels, _): pixels * inputChannels * outputChannels
        case let .convolution(g, inputChannels, _, outputChannels):
            g.outputWidth * g.outputHeight * g.window.width * g.window.height * inputChannels * outputChannels
        case let .depthwise(g, channels), let .maxPool(g, channels):
            g.outputWidth * g.outputHeight * g.window.width * g.window.height * channels
        // Not multiply-adds but as costly: four taps per value, one sum per value.
        case let .resize(_, _, channels, outputWidth, outputHeight, _, _): outputWidth * outputHeight * channels * 4
        case let .add(count): count
        default: 0
        }
    }

    /// Runs parts `parts` of the `count` the step is cut into: a share of its
    /// rows for the kernels that split, the whole step (part 0 only) for the others.
    func run(parts: Range<Int> = 0..<1, of count: Int = 1) {
        guard parallelRows > 1 || parts.lowerBound == 0 else { return }
        run(share: Self.share(of: parallelRows, parts: parts, count: count))
    }

    /// What parts `parts` of `count` cover of `total` rows (or pixels, blocks): the one
    /// cut that running a part and reasoning about what it reads or writes both use.
    static func share(of total: Int, parts: Range<Int>, count: Int) -> Range<Int> {
        parts.lowerBound * total / count..<parts.upperBound * total / count
    }

    /// Runs output rows `rows` of `height`, as a member of a `StepGroup` (a 1x1
    /// convolution split by pixels takes those rows' pixels).
    func run(rows: Range<Int>, of height: Int) {
        let perRow = parallelRows / height
        run(share: rows.lowerBound * perRow..<rows.upperBound * perRow)
    }

    /// Runs `share` of the step's `parallelRows`.
    private func run(share: Range<Int>) {
        let rows = parallelRows
        switch kind {
        case let .pointwise(pixels, inputChannels, padded, outputChannels, residualChannels):
            let byChannels = Self.splitsChannels(pixels: pixels, outputChannels: outputChannels)
            Kernels.pointwiseConvolution(
                input: inputs[0], pixels: byChannels ? 0..<pixels : share,
                channels: byChannels ? share.lowerBound * 16..<min(share.upperBound * 16, outputChannels) : nil,
                inputChannels: inputChannels, weights: weights!,
                bias: bias!, paddedOutputChannels: padded, output: output,
                outputChannels: outputChannels, bounds: bounds,
                residual: residualChannels > 0 ? inputs[1] : nil, residualChannels: residualChannels)
        case let .convolution(geometry, inputChannels, padded, outputChannels):
            Kernels.convolution(
                input: inputs[0], inputChannels: inputChannels, geometry: geometry, rows: share, weights: weights!,
                bias: bias!, paddedOutputChannels: padded, output: output,
                outputChannels: outputChannels, bounds: bounds)
        case let .depthwise(geometry, channels):
            Kernels.depthwiseConvolution(
                input: inputs[0], channels: channels, geometry: geometry, rows: share, weights: weights!,
                bias: bias!, output: output, bounds: bounds)
        case let .depthwiseMultiplier(geometry, inputChannels, multiplier):
            Kernels.depthwiseConvolution(
                input: inputs[0], inputChannels: inputChannels, multiplier: multiplier,
                geometry: geometry, weights: weights!, bias: bias!, output: output, bounds: bounds)
        case let .maxPool(geometry, channels):
            Kernels.maxPool(input: inputs[0], channels: channels, geometry: geometry, rows: share, output: output, bounds: bounds)
        case let .add(count):
            // Parts of whole blocks (the last takes the rest), so each starts on a vector.
            let start = share.lowerBound * Self.addBlock, end = share.upperBound == rows ? count : share.upperBound * Self.addBlock
            Kernels.add(inputs[0] + start, inputs[1] + start, count: end - start, output: output + start, bounds: bounds)
        case let .clamp(count):
            Kernels.clamp(inputs[0], count: count, output: output, bounds: bounds)
        case let .copy(count):
            if output != inputs[0] { output.update(from: inputs[0], count: count) }
        case let .pad(inputShape, outputShape, before):
            output.update(repeating: 0, count: outputShape.reduce(1, *))
            Self.pad(input: inputs[0], inputShape: inputShape, output: output, outputShape: outputShape, before: before)
        case let .resize(inputWidth, inputHeight, channels, outputWidth, outputHeight, alignCorners, halfPixelCenters):
            Kernels.resizeBilinear(
                input: inputs[0], inputWidth: inputWidth, inputHeight: inputHeight, channels: channels,
                output: output, addend: inputs.count > 1 ? inputs[1] : nil,
                outputWidth: outputWidth, outputHeight: outputHeight, rows: share,
                alignCorners: alignCorners, halfPixelCenters: halfPixelCenters)
        case let .concatenate(outer, slices):
            var out = output
            for block in 0..<outer {
                for (input, length) in zip(inputs, slices) {
                    out.update(from: input + block * length, count: length)
                    out += length
                }
            }
        }
    }

    /// The rows of `input` that output rows `rows` read, run as a member of a `StepGroup`;
    /// nil where it reads all of it, or cannot say.
    func inputRows(_ rows: Range<Int>, of input: UnsafeMutablePointer<Float>) -> Range<Int>? {
        switch kind {
        case let .convolution(g, _, _, _), let .depthwise(g, _), let .maxPool(g, _):
            guard input == inputs[0] else { return nil }
            let first = rows.lowerBound * g.window.strideY - g.padTop
            let end = (rows.upperBound - 1) * g.window.strideY - g.padTop + g.window.height
            let start = min(max(first, 0), g.inputHeight)
            return start..<max(start, min(end, g.inputHeight))
        case let .pointwise(pixels, _, _, outputChannels, _):
            // Split by pixels, a member reads its own rows of its input and residual.
            return Self.splitsChannels(pixels: pixels, outputChannels: outputChannels) ? nil : rows
        case let .resize(_, inputHeight, _, _, outputHeight, alignCorners, halfPixelCenters):
            guard input == inputs[0] else { return rows }  // the addend, at its own rows
            let scale = Kernels.resizeScale(inputHeight, outputHeight, alignCorners: alignCorners)
            let first = Kernels.resizeSample(rows.lowerBound, scale, inputHeight, halfPixelCenters: halfPixelCenters)
            let last = Kernels.resizeSample(rows.upperBound - 1, scale, inputHeight, halfPixelCenters: halfPixelCenters)
            return first.lower..<last.upper + 1
        default: return nil
        }
    }

    /// Copies the input into the (already zeroed) output at offset `before`, one innermost row at a time.
    private static func pad(
        input: UnsafePointer<Float>, inputShape: [Int], output: UnsafeMutablePointer<Float>,
        outputShape: [Int], before: [Int]
    ) {
        let rank = inputShape.count
        let rowLength = inputShape[rank - 1]
        let rows = inputShape.dropLast().reduce(1, *)
        for row in 0..<rows {
            var remainder = row, outputOffset = before[rank - 1], span = outputShape[rank - 1]
            for dimension in stride(from: rank - 2, through: 0, by: -1) {
                let index = remainder % inputShape[dimension]
                remainder /= inputShape[dimension]
                outputOffset += (index + before[dimension]) * span
                span *= outputShape[dimension]
            }
            (output + outputOffset).update(from: input + row * rowLength, count: rowLength)
        }
    }
}
