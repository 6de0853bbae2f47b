/// RESHAPE: the same values under another shape; a copy, or nothing when the
/// output shares the input's place.
struct Reshape: Kernel {
    /// One part: it copies all of its input.
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? { nil }
    let count: Int

    static func plan(_ op: OperatorDescription, _ planner: inout Planner) throws(ModelError) -> PreparedOperator {
        try planner.requireInputs(op, 1)
        let shape = try planner.shape(of: op.inputs[0]), expected = planner.outputShape(of: op)
        guard expected.reduce(1, *) == shape.reduce(1, *) else {
            throw planner.fail("RESHAPE of \(shape) to \(expected) changes the element count")
        }
        return PreparedOperator(kernel: Reshape(count: shape.reduce(1, *)), reads: [op.inputs[0]])
    }

    var operation: String { "RESHAPE" }

    func run(_ share: Range<Int>, _ step: Step) {
        if step.output != step.inputs[0] { step.output.update(from: step.inputs[0], count: count) }
    }
}
