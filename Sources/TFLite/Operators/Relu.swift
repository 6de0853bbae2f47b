/// RELU as an operator of its own (most are folded into the convolution or ADD
/// before them, see `Planner.fusingRelu`): every value clamped at zero.
struct Relu: Kernel {
    /// Split by blocks of values, not rows: it runs as a step of its own.
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? { nil }
    let count: Int

    static func plan(_ op: OperatorDescription, _ planner: inout Planner) throws(ModelError) -> PreparedOperator {
        try planner.requireInputs(op, 1)
        let shape = try planner.shape(of: op.inputs[0])
        try planner.expect(shape, from: op)
        return PreparedOperator(kernel: Relu(count: shape.reduce(1, *)), bounds: Bounds(.relu), reads: [op.inputs[0]])
    }

    var operation: String { "RELU" }

    func run(_ share: Range<Int>, _ step: Step) {
        Self.clamp(step.inputs[0], count: count, output: step.output, bounds: step.bounds)
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
}
