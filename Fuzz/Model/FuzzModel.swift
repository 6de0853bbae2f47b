// libFuzzer target for the model readers (`make fuzz`): the TFLite reader and
// interpreter, and dlib's serialisation as the face recognition ResNet's
// reader reads it (each input is given to both).
//
// A model that loads must also run: every shape the planner accepted has to
// be safe for the kernels. In a normal build this replays the files named
// on the command line (the committed corpus, made by tools/make-model-corpus.py,
// and the head of dlib's ResNet file).
import FaceRecognition
import FuzzSupport
import TFLite

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzModel(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? DlibResNet.read(bytes)
    guard let model = try? TFLiteModel(bytes: bytes, path: "fuzz") else { return 0 }
    // As given, and with the first layer folded for gray input (as BlazeFace loads models).
    for folded in [false, true] {
        guard let interpreter = try? Interpreter(model: model, path: "fuzz", identicalInputChannels: folded) else { continue }
        let input = interpreter.input
        for index in input.indices { input[index] = Float(index % 7) - 3 }
        interpreter.invoke()
    }
    return 0
}

#if FUZZING
    // SwiftPM links executables with `main` aliased to `fuzz_model_main`.
    @_cdecl("fuzz_model_main")
    func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        Fuzzing.run(fuzzModel, argc: argc, argv: argv)
    }
#else
    @main
    struct Replay {
        static func main() throws {
            try Fuzzing.replay(fuzzModel, paths: Array(CommandLine.arguments.dropFirst()))
        }
    }
#endif
