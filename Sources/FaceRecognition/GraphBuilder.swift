import TFLite

/// Builds dlib's layers, from the input up, into the operators `Interpreter`
/// runs (NHWC tensors): a convolution's affine layer folds into its weights,
/// a relu into the operator before it, average pooling becomes a depthwise
/// convolution of equal weights, the fully connected layer a 1x1 convolution,
/// and a sum of unequal shapes pads the smaller with zeros first, as dlib's
/// add_prev does (its channels and its bottom and right edges).
struct GraphBuilder {
    private(set) var tensors: [TensorDescription]
    private(set) var operators: [OperatorDescription] = []
    /// The tensor the next layer reads.
    var current = 0
    /// What each tag remembered.
    var tagged: [Int: Int] = [:]

    init() {
        tensors = [TensorDescription(name: "chip", shape: [1, DlibResNet.inputSize, DlibResNet.inputSize, 3], type: .float32)]
    }

    var height: Int { tensors[current].shape[1] }
    var width: Int { tensors[current].shape[2] }
    var channels: Int { tensors[current].shape[3] }

    func model() -> TFLiteModel { TFLiteModel(tensors: tensors, operators: operators, inputs: [0], outputs: [current]) }

    /// A convolution of dlib's filters ([out][in][rows][columns]); stride 1 pads by half the window, longer strides not at all.
    mutating func convolution(dlibFilters: [Float], biases: [Float], filters: Int, size: Int, stride: Int) {
        let inputs = channels
        var filter = [Float](repeating: 0, count: dlibFilters.count)
        for o in 0..<filters {
            for i in 0..<inputs {
                for y in 0..<size {
                    for x in 0..<size { filter[((o * size + y) * size + x) * inputs + i] = dlibFilters[((o * inputs + i) * size + y) * size + x] }
                }
            }
        }
        let window = Window(padding: stride == 1 ? .same : .valid, strideX: stride, strideY: stride)
        let (outHeight, outWidth) = outputSize(window, size: size)
        append(
            .conv2D(window, .none), reading: [current, constant(filter, [filters, size, size, inputs]), constant(biases, [filters])],
            shape: [1, outHeight, outWidth, filters])
    }

    /// Folds an affine layer (a scale and an offset per channel) into the convolution that wrote the current tensor.
    mutating func scaleLastConvolution(by scales: [Float], adding offsets: [Float]) -> Bool {
        guard let last = operators.last, case .conv2D = last.operation, last.outputs == [current] else { return false }
        let filterIndex = last.inputs[1], biasIndex = last.inputs[2]
        var filter = values(of: filterIndex), bias = values(of: biasIndex)
        let perFilter = filter.count / scales.count
        for o in scales.indices {
            for index in o * perFilter..<(o + 1) * perFilter { filter[index] *= scales[o] }
            bias[o] = bias[o] * scales[o] + offsets[o]
        }
        tensors[filterIndex].data = Self.bytes(filter)[...]
        tensors[biasIndex].data = Self.bytes(bias)[...]
        return true
    }

    /// Applies a relu to the current tensor as the operator that wrote it stores it.
    mutating func applyRelu() -> Bool {
        guard var last = operators.popLast(), last.outputs == [current] else { return false }
        defer { operators.append(last) }
        switch last.operation {
        case .conv2D(let window, .none): last.operation = .conv2D(window, .relu)
        case .add(.none): last.operation = .add(.relu)
        default: return false
        }
        return true
    }

    mutating func maxPool(size: Int, stride: Int) {
        let window = Window(padding: .valid, strideX: stride, strideY: stride, width: size, height: size)
        let (outHeight, outWidth) = outputSize(window, size: size)
        append(.maxPool2D(window, .none), reading: [current], shape: [1, outHeight, outWidth, channels])
    }

    /// The mean under each window, as a depthwise convolution whose weights are all 1 / cells.
    mutating func averagePool(width poolWidth: Int, height poolHeight: Int, stride: Int) {
        let window = Window(padding: .valid, strideX: stride, strideY: stride)
        let outHeight = (height - poolHeight) / stride + 1, outWidth = (width - poolWidth) / stride + 1
        let weights = [Float](repeating: 1 / Float(poolWidth * poolHeight), count: poolWidth * poolHeight * channels)
        append(
            .depthwiseConv2D(window, multiplier: 1, .none),
            reading: [current, constant(weights, [1, poolHeight, poolWidth, channels]), constant([Float](repeating: 0, count: channels), [channels])],
            shape: [1, outHeight, outWidth, channels])
    }

    /// The current tensor plus `other`; where their shapes differ, the smaller is padded with zeros after its end.
    mutating func add(_ other: Int) {
        let shape = zip(tensors[current].shape, tensors[other].shape).map { max($0, $1) }
        let first = padded(current, to: shape), second = padded(other, to: shape)
        append(.add(.none), reading: [first, second], shape: shape)
    }

    /// dlib's fully connected layer without biases (weights [in][out]) as a 1x1 convolution.
    mutating func fullyConnected(dlibWeights: [Float], outputs: Int) {
        let inputs = channels
        var filter = [Float](repeating: 0, count: dlibWeights.count)
        for o in 0..<outputs {
            for i in 0..<inputs { filter[o * inputs + i] = dlibWeights[i * outputs + o] }
        }
        append(
            .conv2D(Window(padding: .valid, strideX: 1, strideY: 1), .none),
            reading: [current, constant(filter, [outputs, 1, 1, inputs]), constant([Float](repeating: 0, count: outputs), [outputs])],
            shape: [1, 1, 1, outputs])
    }

    private mutating func padded(_ tensor: Int, to shape: [Int]) -> Int {
        let own = tensors[tensor].shape
        guard own != shape else { return tensor }
        let paddings = own.indices.flatMap { [Int32(0), Int32(shape[$0] - own[$0])] }
        let paddingTensor = tensors.count
        tensors.append(TensorDescription(name: "paddings", shape: [own.count, 2], type: .int32, data: Self.bytes(paddings.map { UInt32(bitPattern: $0) })[...]))
        let output = tensors.count
        tensors.append(TensorDescription(name: "padded \(tensor)", shape: shape, type: .float32))
        operators.append(OperatorDescription(operation: .pad, inputs: [tensor, paddingTensor], outputs: [output]))
        return output
    }

    private mutating func append(_ operation: Operation, reading inputs: [Int], shape: [Int]) {
        let output = tensors.count
        tensors.append(TensorDescription(name: "layer \(operators.count)", shape: shape, type: .float32))
        operators.append(OperatorDescription(operation: operation, inputs: inputs, outputs: [output]))
        current = output
    }

    private func outputSize(_ window: Window, size: Int) -> (Int, Int) {
        switch window.padding {
        case .same: ((height + window.strideY - 1) / window.strideY, (width + window.strideX - 1) / window.strideX)
        case .valid: ((height - size) / window.strideY + 1, (width - size) / window.strideX + 1)
        }
    }

    private mutating func constant(_ values: [Float], _ shape: [Int]) -> Int {
        tensors.append(TensorDescription(name: "constant", shape: shape, type: .float32, data: Self.bytes(values.map(\.bitPattern))[...]))
        return tensors.count - 1
    }

    private func values(of tensor: Int) -> [Float] {
        let data = tensors[tensor].data!
        return stride(from: data.startIndex, to: data.endIndex, by: 4).map { at in
            var word: UInt32 = 0
            for byte in (0..<4).reversed() { word = word << 8 | UInt32(data[at + byte]) }
            return Float(bitPattern: word)
        }
    }

    private static func bytes(_ words: [UInt32]) -> [UInt8] {
        words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
    }

    private static func bytes(_ values: [Float]) -> [UInt8] { bytes(values.map(\.bitPattern)) }
}
