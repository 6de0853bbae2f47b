/// Turns a model into steps: checks every operator's shapes against the
/// file, folds constant DEQUANTIZE ops, repacks weights and gives every
/// intermediate tensor a place in the arena (reusing dead tensors' space).
struct Planner {
    struct Plan {
        var steps: [PlannedStep]
        var constants: [Float]
        var arenaSize: Int
        var input: Place
        var outputs: [Place]
    }

    let model: TFLiteModel
    let path: String
    /// Whether a unit's inputs stay one unit longer than its last step, for threads that
    /// run one unit ahead of each other (see `WorkerPool`): what a unit writes then never
    /// overwrites what the unit before it reads.
    let lagging: Bool
    private var constants: [Float] = []
    /// Float values of constant tensors, by tensor index (after DEQUANTIZE folding).
    var constantValues: [Int: [Float]] = [:]
    private var places: [Int: Place] = [:]
    private var arena = ArenaAllocator()

    init(model: TFLiteModel, path: String, lagging: Bool = false) {
        self.model = model
        self.path = path
        self.lagging = lagging
    }

    /// The most operators a model may have (BlazeFace has about a hundred): the worker
    /// pool names each step, and each group of steps, in 16 bits.
    static let maximumOperators = 10_000

    func fail(_ reason: String) -> ModelError { ModelError(path: path, reason: reason) }

    mutating func plan() throws(ModelError) -> Plan {
        guard model.operators.count <= Self.maximumOperators else {
            throw fail("has \(model.operators.count) operators; sentry runs at most \(Self.maximumOperators)")
        }
        guard model.inputs.count == 1, !model.outputs.isEmpty else {
            throw fail("has \(model.inputs.count) inputs and \(model.outputs.count) outputs; expected one input")
        }
        for (index, tensor) in model.tensors.enumerated() {
            guard let data = tensor.data else { continue }
            switch tensor.type {
            case .float32: constantValues[index] = Self.floats(data)
            case .float16: constantValues[index] = Self.halfFloats(data)
            case .int32: break
            }
        }
        let input = model.inputs[0]
        guard model.tensors[input].type == .float32, model.tensors[input].shape.first == 1 else {
            throw fail("its input is not a float32 tensor with batch 1")
        }
        places[input] = .arena(arena.allocate(model.tensors[input].elementCount))

        // A resize takes the tensor and its size (an addend is only ever folded in, `fusingAdds`).
        if let resize = model.operators.first(where: { if case .resizeBilinear = $0.operation { $0.inputs.count > 2 } else { false } }) {
            throw fail("a RESIZE_BILINEAR has \(resize.inputs.count) inputs; it takes two (the tensor and its size)")
        }
        let (reluFused, graphOutputs) = Self.fusingRelu(model.operators, outputs: model.outputs)
        let operators = fusingPrelus(fusingAdds(reluFused, outputs: graphOutputs), outputs: graphOutputs)
        var lastUse: [Int: Int] = [:]
        for (index, op) in operators.enumerated() { for tensor in op.readTensors where tensor >= 0 { lastUse[tensor] = index } }
        for output in graphOutputs { lastUse[output] = Int.max }

        var steps: [PlannedStep] = []
        // The unit being formed, a row group (see `rowSharing`) or one step: its rows (nil
        // for one step that is not a row group), the tensors its steps wrote, and the tensors
        // its steps read last, freed only when it closes (so that no later step of the group
        // writes where a thread still reads), or, `lagging`, when the unit after it closes.
        var unit: (rows: Int?, outputs: Set<Int>, dead: [Int])?
        var deadBefore: [Int] = []
        func release(_ tensors: [Int]) {
            for tensor in tensors { if case .arena(let offset) = places[tensor] { arena.free(offset) } }
        }
        for (index, op) in operators.enumerated() {
            guard let prepared = try plan(op) else { continue }
            let sharing = prepared.kernel.rowSharing
            var joins = false
            if let current = unit, let sharing, sharing.rows == current.rows {
                let pointwise = sharing.pointwiseReads.map { prepared.reads[$0] }
                joins = prepared.reads.allSatisfy { !current.outputs.contains($0) || pointwise.contains($0) }
            }
            if !joins {
                let closing = unit?.dead ?? []
                release(lagging ? deadBefore : closing)
                deadBefore = lagging ? closing : []
                unit = (rows: sharing?.rows, outputs: [], dead: [])
            }
            var step = try place(prepared, writing: op.outputs[0])
            step.joinsPrevious = joins
            step.outputRows = sharing?.rows ?? 0
            steps.append(step)
            unit!.outputs.formUnion(op.outputs)
            unit!.dead += Set(op.readTensors).filter { $0 >= 0 && lastUse[$0] == index }
        }
        let outputs = try graphOutputs.map { output throws(ModelError) -> Place in
            if let place = places[output] { return place }
            throw fail("output tensor \(model.tensors[output].name) is never computed")
        }
        guard arena.size <= TFLiteModel.maximumElements * 2 else {
            throw fail("needs \(arena.size * 4 / 1_000_000) MB for activations; more than sentry allows")
        }
        return Plan(steps: steps, constants: constants, arenaSize: arena.size, input: places[input]!, outputs: outputs)
    }

    /// The model for an input whose channels are always equal (a gray frame
    /// given to a network trained on colour): when every reader of the input
    /// is a CONV_2D with constant weights, each filter's weights are summed
    /// over the input channels and the input keeps one channel. The first
    /// layer does a third of the work and the caller writes a third of the
    /// input; the sums differ from the three-channel ones only by rounding.
    /// Any other model comes back unchanged.
    static func foldingIdenticalInputChannels(_ model: TFLiteModel) -> TFLiteModel {
        guard model.inputs.count == 1 else { return model }
        let input = model.inputs[0]
        let shape = model.tensors[input].shape
        guard shape.count == 4, shape[3] > 1, !model.outputs.contains(input) else { return model }
        let readers = model.operators.indices.filter { model.operators[$0].inputs.contains(input) }
        var folded = model
        for index in readers {
            let op = model.operators[index]
            guard case .conv2D = op.operation, op.inputs.firstIndex(of: input) == 0, op.inputs.count >= 2,
                let weights = constantFloats(op.inputs[1], in: model)
            else { return model }
            let filterShape = model.tensors[op.inputs[1]].shape
            guard filterShape.count == 4, filterShape[3] == shape[3], weights.count == filterShape.reduce(1, *) else { return model }
            let channels = shape[3]
            let summed = stride(from: 0, to: weights.count, by: channels).map { start in
                weights[start..<start + channels].reduce(0, +)
            }
            folded.tensors.append(
                TensorDescription(
                    name: model.tensors[op.inputs[1]].name + " (input channels summed)",
                    shape: Array(filterShape.dropLast()) + [1], type: .float32,
                    data: ArraySlice(summed.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian, Array.init) })))
            folded.operators[index].inputs[1] = folded.tensors.count - 1
        }
        guard !readers.isEmpty else { return model }
        folded.tensors[input].shape[3] = 1
        return folded
    }

    /// The values of a constant float tensor, or of a DEQUANTIZE of one; nil for computed tensors.
    private static func constantFloats(_ index: Int, in model: TFLiteModel) -> [Float]? {
        func values(_ index: Int) -> [Float]? {
            guard index >= 0, let data = model.tensors[index].data else { return nil }
            switch model.tensors[index].type {
            case .float32: return floats(data)
            case .float16: return halfFloats(data)
            case .int32: return nil
            }
        }
        if let direct = values(index) { return direct }
        guard index >= 0, let producer = model.operators.first(where: { $0.outputs.contains(index) }),
            case .dequantize = producer.operation, let source = producer.inputs.first
        else { return nil }
        return values(source)
    }

    /// Folds each RELU into the convolution or ADD before it when that result
    /// feeds only the RELU: the producer clamps as it writes, the RELU goes,
    /// and readers of the RELU's output read the producer's.
    static func fusingRelu(_ operators: [OperatorDescription], outputs: [Int]) -> ([OperatorDescription], [Int]) {
        var readers: [Int: Int] = [:]
        for op in operators { for tensor in op.readTensors { readers[tensor, default: 0] += 1 } }
        var producer: [Int: Int] = [:]
        for (index, op) in operators.enumerated() { for tensor in op.outputs { producer[tensor] = index } }
        var fused = operators
        var renamed: [Int: Int] = [:]
        var dropped = Set<Int>()
        for (index, op) in operators.enumerated() {
            guard case .relu = op.operation, op.outputs.count == 1, let source = op.inputs.first, readers[source] == 1,
                !outputs.contains(source), let producerIndex = producer[source], producerIndex < index,
                fused[producerIndex].outputs.count == 1
            else { continue }
            switch fused[producerIndex].operation {
            case let .conv2D(window, .none): fused[producerIndex].operation = .conv2D(window, .relu)
            case let .depthwiseConv2D(window, multiplier, .none):
                fused[producerIndex].operation = .depthwiseConv2D(window, multiplier: multiplier, .relu)
            case .add(.none): fused[producerIndex].operation = .add(.relu)
            default: continue
            }
            renamed[op.outputs[0]] = source
            dropped.insert(index)
        }
        let kept = fused.enumerated().filter { !dropped.contains($0.offset) }.map { entry in
            var op = entry.element
            op.inputs = op.inputs.map { renamed[$0] ?? $0 }
            return op
        }
        return (kept, outputs.map { renamed[$0] ?? $0 })
    }

    /// Folds an ADD into the operator that computes one of its inputs, when
    /// nothing else reads that result, so the sum is never stored and read back.
    ///
    /// A 1x1 convolution (BlazeFace's residual blocks) moves to the ADD's place,
    /// takes the other input as its residual (`FusedInputs.residual`) and the ADD's
    /// activation, and writes the ADD's output. When that other input is a PAD
    /// that only appends zero channels, read by nothing else, the PAD goes too
    /// and the residual is the PAD's input (fewer channels).
    ///
    /// A RESIZE_BILINEAR (the feature pyramid's upsampling), when the ADD has no
    /// activation, takes the other input as its addend, added to each value it writes.
    func fusingAdds(_ operators: [OperatorDescription], outputs: [Int]) -> [OperatorDescription] {
        var readers: [Int: Int] = [:]
        for op in operators { for tensor in op.readTensors { readers[tensor, default: 0] += 1 } }
        var producer: [Int: Int] = [:]
        for (index, op) in operators.enumerated() { for tensor in op.outputs { producer[tensor] = index } }
        /// Read once, by the ADD, and not a graph output: free to be folded away.
        func readOnlyByTheAdd(_ tensor: Int) -> Bool { readers[tensor] == 1 && !outputs.contains(tensor) }
        var fused = operators
        var dropped = Set<Int>()
        for (index, op) in operators.enumerated() {
            guard case let .add(activation) = op.operation, op.inputs.count == 2, op.outputs.count == 1 else { continue }
            for (sum, other) in [(op.inputs[0], op.inputs[1]), (op.inputs[1], op.inputs[0])] {
                guard sum >= 0, other >= 0, readOnlyByTheAdd(sum), let computing = producer[sum], !dropped.contains(computing),
                    operators[computing].outputs == [sum], model.tensors[sum].shape == model.tensors[other].shape
                else { continue }
                let source = operators[computing]
                if case .resizeBilinear = source.operation, activation == .none, source.fused.addend == nil {
                    fused[index] = source
                    fused[index].outputs = op.outputs
                    fused[index].fused.addend = other
                    dropped.insert(computing)
                    break
                }
                guard case let .conv2D(window, .none) = source.operation, window.strideX == 1, window.strideY == 1,
                    (2...3).contains(source.inputs.count), source.fused == FusedInputs(), source.inputs[1] >= 0,
                    model.tensors[source.inputs[1]].shape.count == 4, model.tensors[source.inputs[1]].shape[1...2] == [1, 1]
                else { continue }
                var residual = other
                if readOnlyByTheAdd(other), let pad = producer[other], case .pad = operators[pad].operation,
                    operators[pad].inputs.count >= 2, let padded = operators[pad].inputs.first, padded >= 0,
                    model.tensors[padded].shape.count == 4,
                    let paddings = try? integers(operators[pad].inputs[1], "PAD paddings"),
                    paddings.count == 8, paddings.dropLast().allSatisfy({ $0 == 0 }), paddings[7] >= 0,
                    model.tensors[other].shape == Array(model.tensors[padded].shape.prefix(3)) + [model.tensors[padded].shape[3] + paddings[7]]
                {
                    residual = padded
                    dropped.insert(pad)
                }
                fused[index] = OperatorDescription(operation: .conv2D(window, activation), inputs: source.inputs, outputs: op.outputs)
                fused[index].fused.residual = residual
                dropped.insert(computing)
                break
            }
        }
        return fused.enumerated().filter { !dropped.contains($0.offset) }.map(\.element)
    }

    /// Folds a PRELU into the convolution that computes its input, when nothing
    /// else reads that result (MediaPipe's face mesh and iris models end most blocks
    /// with a 1x1 convolution, an ADD that `fusingAdds` folded into it, and a PRELU;
    /// their first layers and 2x2 stride-2 convolutions have one too):
    /// the convolution takes the slopes (`FusedInputs.slopes`), applies them as it writes,
    /// and writes the PRELU's output, one pass over the tensor fewer. It stays where
    /// it is: the slopes are constant, and the PRELU's readers all come after it.
    func fusingPrelus(_ operators: [OperatorDescription], outputs: [Int]) -> [OperatorDescription] {
        var readers: [Int: Int] = [:]
        for op in operators { for tensor in op.readTensors { readers[tensor, default: 0] += 1 } }
        var producer: [Int: Int] = [:]
        for (index, op) in operators.enumerated() { for tensor in op.outputs { producer[tensor] = index } }
        var fused = operators
        var dropped = Set<Int>()
        for (index, op) in operators.enumerated() {
            guard case .prelu = op.operation, op.inputs.count == 2, op.outputs.count == 1, let source = op.inputs.first, source >= 0,
                readers[source] == 1, !outputs.contains(source), let computing = producer[source], computing < index,
                !dropped.contains(computing), fused[computing].outputs == [source], (2...3).contains(fused[computing].inputs.count),
                fused[computing].fused.slopes == nil,
                case .conv2D(_, .none) = fused[computing].operation,
                fused[computing].inputs[1] >= 0, case let filter = model.tensors[fused[computing].inputs[1]].shape,
                filter.count == 4, let slopes = constantValues[op.inputs[1]], slopes.count == filter[0]
            else { continue }
            fused[computing].outputs = op.outputs
            fused[computing].fused.slopes = op.inputs[1]
            dropped.insert(index)
        }
        return fused.enumerated().filter { !dropped.contains($0.offset) }.map(\.element)
    }

    // MARK: Operators

    /// `op` planned by its file in `Operators/`; nil for an operator folded
    /// away while planning (DEQUANTIZE of a constant: no step, nothing in the arena).
    private mutating func plan(_ op: OperatorDescription) throws(ModelError) -> PreparedOperator? {
        guard op.outputs.count == 1 else { throw fail("an operator with \(op.outputs.count) outputs is not supported") }
        let output = model.tensors[op.outputs[0]]
        guard output.type == .float32 else { throw fail("tensor \(output.name) is not float32") }
        let prepared: PreparedOperator
        switch op.operation {
        case .dequantize:
            try Dequantize.fold(op, &self)
            return nil
        case let .conv2D(window, activation): prepared = try Conv2D.plan(op, window: window, activation: activation, &self)
        case let .depthwiseConv2D(window, multiplier, activation):
            prepared = try DepthwiseConv2D.plan(op, window: window, multiplier: multiplier, activation: activation, &self)
        case let .maxPool2D(window, activation): prepared = try MaxPool2D.plan(op, window: window, activation: activation, &self)
        case let .add(activation): prepared = try Add.plan(op, activation: activation, &self)
        case .relu: prepared = try Relu.plan(op, &self)
        case .prelu: prepared = try Prelu.plan(op, &self)
        case .reshape: prepared = try Reshape.plan(op, &self)
        case .pad: prepared = try Pad.plan(op, &self)
        case let .resizeBilinear(alignCorners, halfPixelCenters):
            prepared = try ResizeBilinear.plan(op, alignCorners: alignCorners, halfPixelCenters: halfPixelCenters, &self)
        case let .concatenation(axis, activation): prepared = try Concatenation.plan(op, axis: axis, activation: activation, &self)
        }
        return prepared
    }

    /// The step for a planned operator: its output placed in the arena, its reads found.
    private mutating func place(_ prepared: PreparedOperator, writing outputTensor: Int) throws(ModelError) -> PlannedStep {
        let output = model.tensors[outputTensor]
        let outputPlace = Place.arena(arena.allocate(output.elementCount))
        places[outputTensor] = outputPlace
        let inputs = try prepared.reads.map { index throws(ModelError) in try place(of: index) }
        return PlannedStep(
            kernel: prepared.kernel, bounds: prepared.bounds, inputs: inputs, output: outputPlace, weights: prepared.weights,
            bias: prepared.bias, inputCounts: prepared.reads.map { model.tensors[$0].elementCount }, outputCount: output.elementCount)
    }

    // MARK: What operators ask while they plan

    /// Fails unless the operator has its first `count` inputs.
    func requireInputs(_ op: OperatorDescription, _ count: Int) throws(ModelError) {
        guard op.inputs.count >= count, op.inputs.prefix(count).allSatisfy({ $0 >= 0 }) else {
            throw fail("an operator writing \(outputName(of: op)) lacks a required input")
        }
    }

    /// The shape the file gives the operator's output.
    func outputShape(of op: OperatorDescription) -> [Int] { model.tensors[op.outputs[0]].shape }

    func outputName(of op: OperatorDescription) -> String { model.tensors[op.outputs[0]].name }

    /// Fails unless the file's output shape is `computed`, the shape the inputs give.
    func expect(_ computed: [Int], from op: OperatorDescription) throws(ModelError) {
        let expected = outputShape(of: op)
        guard computed == expected else {
            throw fail("tensor \(outputName(of: op)) should be \(computed) by the operator's inputs but the file says \(expected)")
        }
    }

    /// Height, width and channels of an image tensor ([1, h, w, c]) that `what` reads.
    func imageShape(_ index: Int, _ what: String) throws(ModelError) -> (height: Int, width: Int, channels: Int) {
        let shape = try shape(of: index)
        guard shape.count == 4, shape[0] == 1 else { throw fail("\(what) needs a [1, h, w, c] tensor, got \(shape)") }
        return (shape[1], shape[2], shape[3])
    }

    // MARK: Tensors

    func shape(of index: Int) throws(ModelError) -> [Int] {
        guard index >= 0 else { throw fail("an operator lacks a required input") }
        return model.tensors[index].shape
    }

    /// Where a float input lives; constants are copied into the constant area on first use.
    private mutating func place(of index: Int) throws(ModelError) -> Place {
        guard index >= 0 else { throw fail("an operator lacks a required input") }
        if let place = places[index] { return place }
        if let values = constantValues[index] {
            let place = store(values)
            places[index] = place
            return place
        }
        if model.tensors[index].type != .float32 {
            throw fail("tensor \(model.tensors[index].name) is \(model.tensors[index].type) where float32 is needed")
        }
        throw fail("tensor \(model.tensors[index].name) is read before any operator computes it")
    }

    func constant(_ index: Int, _ what: String) throws(ModelError) -> [Float] {
        guard index >= 0, let values = constantValues[index] else { throw fail("\(what) is not a constant tensor") }
        guard values.count == model.tensors[index].elementCount else {
            throw fail("\(what) holds \(values.count) values for shape \(model.tensors[index].shape)")
        }
        return values
    }

    func biasValues(_ op: OperatorDescription, count: Int, padded: Int) throws(ModelError) -> [Float] {
        var values = [Float](repeating: 0, count: padded)
        if op.inputs.count > 2, op.inputs[2] >= 0 {
            let bias = try constant(op.inputs[2], "bias")
            guard bias.count == count else { throw fail("a bias has \(bias.count) values for \(count) channels") }
            values.replaceSubrange(0..<count, with: bias)
        }
        return values
    }

    func integers(_ index: Int, _ what: String) throws(ModelError) -> [Int] {
        guard index >= 0, model.tensors[index].type == .int32, let data = model.tensors[index].data else {
            throw fail("\(what) is not a constant int32 tensor")
        }
        return stride(from: data.startIndex, to: data.endIndex, by: 4).map { Int(Int32(bitPattern: Self.word(data, at: $0))) }
    }

    mutating func store(_ values: [Float]) -> Place {
        let place = Place.constant(constants.count)
        constants.append(contentsOf: values)
        // Keep every constant block 32-byte aligned relative to the start.
        constants.append(contentsOf: repeatElement(0, count: (8 - constants.count % 8) % 8))
        return place
    }

    static func floats(_ data: ArraySlice<UInt8>) -> [Float] {
        stride(from: data.startIndex, to: data.endIndex, by: 4).map { Float(bitPattern: word(data, at: $0)) }
    }

    /// The little-endian 32-bit word at `offset`.
    static func word(_ data: ArraySlice<UInt8>, at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for byte in (0..<4).reversed() { value = value << 8 | UInt32(data[offset + byte]) }
        return value
    }

    static func halfFloats(_ data: ArraySlice<UInt8>) -> [Float] {
        stride(from: data.startIndex, to: data.endIndex, by: 2).map { offset in
            floatFromHalf(UInt16(data[offset]) | UInt16(data[offset + 1]) << 8)
        }
    }
}

/// IEEE 754 binary16 to binary32, including subnormals, infinities and NaN.
func floatFromHalf(_ bits: UInt16) -> Float {
    let sign = UInt32(bits & 0x8000) << 16
    let exponent = Int(bits >> 10) & 0x1F
    let mantissa = UInt32(bits & 0x3FF)
    switch exponent {
    case 0:
        let magnitude = Float(mantissa) * 0x1p-24
        return sign == 0 ? magnitude : -magnitude
    case 31:
        return Float(bitPattern: sign | 0x7F80_0000 | mantissa << 13)
    default:
        return Float(bitPattern: sign | UInt32(exponent - 15 + 127) << 23 | mantissa << 13)
    }
}
