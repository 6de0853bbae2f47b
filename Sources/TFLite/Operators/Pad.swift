/// PAD with zeros (constant paddings). BlazeFace's PADs only append zero channels
/// to a residual and are folded into the 1x1 convolution that adds it (`Planner.fusingAdds`).
struct Pad: Kernel {
    /// One part: it reads all of its input.
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? { nil }
    let inputShape: [Int]
    let outputShape: [Int]
    /// Zeros before the input along each dimension.
    let before: [Int]

    static func plan(_ op: OperatorDescription, _ planner: inout Planner) throws(ModelError) -> PreparedOperator {
        try planner.requireInputs(op, 2)
        let shape = try planner.shape(of: op.inputs[0])
        let paddings = try planner.integers(op.inputs[1], "PAD paddings")
        guard paddings.count == 2 * shape.count, paddings.allSatisfy({ $0 >= 0 }) else {
            throw planner.fail("PAD paddings \(paddings) do not fit input \(shape)")
        }
        let before = stride(from: 0, to: paddings.count, by: 2).map { paddings[$0] }
        let padded = shape.indices.map { shape[$0] + paddings[2 * $0] + paddings[2 * $0 + 1] }
        try planner.expect(padded, from: op)
        return PreparedOperator(kernel: Pad(inputShape: shape, outputShape: padded, before: before), reads: [op.inputs[0]])
    }

    var operation: String { "PAD" }

    /// Clears the output, then copies the input into it at offset `before`, one innermost row at a time.
    func run(_ share: Range<Int>, _ step: Step) {
        let output = step.output, input = step.inputs[0]
        output.update(repeating: 0, count: outputShape.reduce(1, *))
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
