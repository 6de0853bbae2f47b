/// DEQUANTIZE of constant fp16 weights (how BlazeFace's files store them): done
/// once while planning, so it never runs. A DEQUANTIZE of a computed tensor is refused.
enum Dequantize {
    static func fold(_ op: OperatorDescription, _ planner: inout Planner) throws(ModelError) {
        guard let source = op.inputs.first, source >= 0, let values = planner.constantValues[source] else {
            throw planner.fail("DEQUANTIZE of a computed tensor (\(planner.outputName(of: op))) is not supported; only constant fp16 weights")
        }
        guard try planner.shape(of: source) == planner.outputShape(of: op) else {
            throw planner.fail("DEQUANTIZE changes shape \(try planner.shape(of: source)) to \(planner.outputShape(of: op))")
        }
        planner.constantValues[op.outputs[0]] = values
    }
}
