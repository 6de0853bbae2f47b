/// RESIZE_BILINEAR (the feature pyramid's upsampling), with TFLite's sampling rules;
/// with a second input, also a fused ADD of it (see `Planner.fusingAdds`).
struct ResizeBilinear: Kernel {
    let inputWidth: Int
    let inputHeight: Int
    let channels: Int
    let outputWidth: Int
    let outputHeight: Int
    let alignCorners: Bool
    let halfPixelCenters: Bool
    let addsSecondInput: Bool

    static func plan(_ op: OperatorDescription, alignCorners: Bool, halfPixelCenters: Bool, _ planner: inout Planner)
        throws(ModelError) -> PreparedOperator
    {
        try planner.requireInputs(op, 2)
        let (height, width, channels) = try planner.imageShape(op.inputs[0], "RESIZE_BILINEAR")
        let size = try planner.integers(op.inputs[1], "RESIZE_BILINEAR size")
        guard size.count == 2, size.allSatisfy({ $0 > 0 }) else { throw planner.fail("RESIZE_BILINEAR size \(size) is not a size") }
        let expected = [1, size[0], size[1], channels]
        try planner.expect(expected, from: op)
        var reads = [op.inputs[0]]
        if let addend = op.fused.addend {
            guard try planner.shape(of: addend) == expected else {
                throw planner.fail(
                    "a RESIZE_BILINEAR's addend of shape \(try planner.shape(of: addend)) does not fit \(planner.outputName(of: op))")
            }
            reads.append(addend)
        }
        let kernel = ResizeBilinear(
            inputWidth: width, inputHeight: height, channels: channels, outputWidth: size[1], outputHeight: size[0],
            alignCorners: alignCorners, halfPixelCenters: halfPixelCenters, addsSecondInput: reads.count > 1)
        return PreparedOperator(kernel: kernel, reads: reads)
    }

    var operation: String { addsSecondInput ? "RESIZE_BILINEAR + ADD" : "RESIZE_BILINEAR" }
    // Not multiply-adds but as costly: four taps per value, one sum per value.
    var work: Int { outputWidth * outputHeight * channels * 4 }
    var partCount: Int { outputHeight }
    /// Its addend is read only where it writes; its input, between rows.
    var rowSharing: RowSharing? { RowSharing(rows: outputHeight, pointwiseReads: addsSecondInput ? [1] : []) }
    var outputPixels: Int { outputWidth * outputHeight }
    var splitsByRows: Bool { true }

    func run(_ share: Range<Int>, _ step: Step) {
        Self.resizeBilinear(
            input: step.inputs[0], inputWidth: inputWidth, inputHeight: inputHeight, channels: channels,
            output: step.output, addend: addsSecondInput ? step.inputs[1] : nil,
            outputWidth: outputWidth, outputHeight: outputHeight, rows: share,
            alignCorners: alignCorners, halfPixelCenters: halfPixelCenters)
    }

    /// The input rows the output rows sample; the addend is read at the output's own rows.
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? {
        guard input == 0 else { return rows }
        let scale = Self.resizeScale(inputHeight, outputHeight, alignCorners: alignCorners)
        let first = Self.resizeSample(rows.lowerBound, scale, inputHeight, halfPixelCenters: halfPixelCenters)
        let last = Self.resizeSample(rows.upperBound - 1, scale, inputHeight, halfPixelCenters: halfPixelCenters)
        return first.lower..<last.upper + 1
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
                    // Split for the type checker (Swift 6.2 gave up on it as one expression).
                    let upperLeft: Vector = load(topLeft + channel) * above * left
                    let lowerLeft: Vector = load(bottomLeft + channel) * below * left
                    let upperRight: Vector = load(topRight + channel) * above * right
                    let lowerRight: Vector = load(bottomRight + channel) * below * right
                    var value = upperLeft + lowerLeft + upperRight + lowerRight
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
