/// ADD of two tensors of the same shape (no broadcasting). Most of BlazeFace's ADDs
/// are folded into the convolution or resize before them (`Planner.fusingAdds`).
struct Add: Kernel {
    /// Split by blocks of values, not rows: it runs as a step of its own.
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? { nil }
    let count: Int

    /// Values per part when threads share it: parts of whole blocks (the last takes
    /// the rest), so that each starts on a vector.
    static let block = 1024

    static func plan(_ op: OperatorDescription, activation: Activation, _ planner: inout Planner) throws(ModelError) -> PreparedOperator {
        try planner.requireInputs(op, 2)
        let shape = try planner.shape(of: op.inputs[0])
        guard op.inputs.count == 2, try planner.shape(of: op.inputs[1]) == shape else {
            throw planner.fail("ADD of tensors with different shapes (broadcasting) is not supported")
        }
        try planner.expect(shape, from: op)
        return PreparedOperator(kernel: Add(count: shape.reduce(1, *)), bounds: Bounds(activation), reads: Array(op.inputs.prefix(2)))
    }

    var operation: String { "ADD" }
    var work: Int { count }
    var partCount: Int { max(1, count / Self.block) }

    func run(_ share: Range<Int>, _ step: Step) {
        let start = share.lowerBound * Self.block
        let end = share.upperBound == partCount ? count : share.upperBound * Self.block
        Self.add(step.inputs[0] + start, step.inputs[1] + start, count: end - start, output: step.output + start, bounds: step.bounds)
    }

    /// Element-wise sum of two tensors of the same shape.
    static func add(
        _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int,
        output: UnsafeMutablePointer<Float>, bounds: Bounds
    ) {
        var index = 0
        while index + 8 <= count {
            store(bounds.apply(load(a + index) + load(b + index)), output + index)
            index += 8
        }
        while index < count {
            output[index] = bounds.apply(a[index] + b[index])
            index += 1
        }
    }
}
