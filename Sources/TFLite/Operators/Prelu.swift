/// PRELU with one slope per channel (MediaPipe's face mesh and iris models put
/// one after most convolutions): a value below zero is multiplied by its
/// channel's slope, others pass. Cut by output rows, and each row reads only
/// its own row, so it joins the row groups of the convolutions around it.
struct Prelu: Kernel {
    let height: Int
    let width: Int
    let channels: Int

    static func plan(_ op: OperatorDescription, _ planner: inout Planner) throws(ModelError) -> PreparedOperator {
        try planner.requireInputs(op, 2)
        let (height, width, channels) = try planner.imageShape(op.inputs[0], "PRELU")
        let slopes = try planner.constant(op.inputs[1], "PRELU slopes")
        // The slopes broadcast over rows and columns: [c], [1, c], [1, 1, c] or [1, 1, 1, c].
        let slopeShape = try planner.shape(of: op.inputs[1])
        guard slopes.count == channels, slopeShape.last == channels, slopeShape.dropLast().allSatisfy({ $0 == 1 }) else {
            throw planner.fail("PRELU slopes of shape \(slopeShape) do not give one per channel of \(channels)")
        }
        try planner.expect([1, height, width, channels], from: op)
        let padded = (channels + 7) / 8 * 8
        let place = planner.store(slopes + [Float](repeating: 0, count: padded - channels))
        return PreparedOperator(
            kernel: Prelu(height: height, width: width, channels: channels), weights: place, reads: [op.inputs[0]])
    }

    var operation: String { "PRELU" }
    var work: Int { height * width * channels }
    var partCount: Int { height }
    var rowSharing: RowSharing? { RowSharing(rows: height, pointwiseReads: [0]) }
    var outputPixels: Int { height * width }
    var splitsByRows: Bool { true }
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? { input == 0 ? rows : nil }

    func run(_ share: Range<Int>, _ step: Step) {
        let slopes = step.weights!, channels = channels
        let rowLength = width * channels
        var input = step.inputs[0] + share.lowerBound * rowLength
        var output = step.output + share.lowerBound * rowLength
        for _ in 0..<share.count * width {
            var channel = 0
            while channel < channels {
                let value = load(input + channel)
                let negative = value * load(slopes + channel)
                store(value.replacing(with: negative, where: value .< 0), output + channel, count: channels - channel)
                channel += 8
            }
            input += channels
            output += channels
        }
    }
}
