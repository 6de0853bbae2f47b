/// CONCATENATION along any axis: `outer` blocks, each the inputs' slices of the
/// given lengths in turn (BlazeFace joins its anchors' boxes and scores this way).
struct Concatenation: Kernel {
    /// One part: it reads all of each input.
    func inputRows(_ rows: Range<Int>, ofInput input: Int) -> Range<Int>? { nil }
    let outer: Int
    let slices: [Int]

    static func plan(_ op: OperatorDescription, axis: Int, activation: Activation, _ planner: inout Planner) throws(ModelError)
        -> PreparedOperator
    {
        try planner.requireInputs(op, 1)
        let shapes = try op.inputs.map { index throws(ModelError) in try planner.shape(of: index) }
        let first = shapes[0], rank = first.count
        let axis = axis < 0 ? axis + rank : axis
        guard (0..<rank).contains(axis), shapes.allSatisfy({ $0.count == rank }),
            shapes.allSatisfy({ shape in (0..<rank).allSatisfy { $0 == axis || shape[$0] == first[$0] } })
        else {
            throw planner.fail("CONCATENATION of \(shapes) on axis \(axis) is not possible")
        }
        var concatenated = first
        concatenated[axis] = shapes.map { $0[axis] }.reduce(0, +)
        try planner.expect(concatenated, from: op)
        guard activation == .none else { throw planner.fail("CONCATENATION with a fused activation is not supported") }
        let kernel = Concatenation(outer: first.prefix(axis).reduce(1, *), slices: shapes.map { $0[axis...].reduce(1, *) })
        return PreparedOperator(kernel: kernel, reads: op.inputs)
    }

    var operation: String { "CONCATENATION" }

    func run(_ share: Range<Int>, _ step: Step) {
        var out = step.output
        for block in 0..<outer {
            for (input, length) in zip(step.inputs, slices) {
                out.update(from: input + block * length, count: length)
                out += length
            }
        }
    }
}
