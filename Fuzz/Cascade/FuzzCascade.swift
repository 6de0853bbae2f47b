// libFuzzer target for the cascade XML loader (`make fuzz`).
//
// In a fuzz build (`SENTRY_FUZZING=1`: Package.swift adds the sanitizers and
// `FUZZING`), libFuzzer drives `LLVMFuzzerTestOneInput`. In a normal build this
// is a replay tool: it runs the files named on the command line through the
// same function, which is how the committed corpus becomes a regression test.
import FaceDetection
import FuzzSupport
import Imaging

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCascade(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let cascade = try? HaarCascade(xml: bytes) else { return 0 }
    // A cascade that loads must also run, on a frame of any size.
    let detector = CascadeDetector(cascade: cascade, parameters: CascadeParameters(minSize: 1))
    for (width, height) in [(cascade.windowWidth, cascade.windowHeight), (cascade.windowWidth + 3, cascade.windowHeight + 5)] {
        var image = GrayImage(width: width, height: height)
        for i in image.pixels.indices { image.pixels[i] = UInt8(truncatingIfNeeded: i &* 37) }
        _ = detector.detectFaces(in: image)
    }
    return 0
}

#if FUZZING
    // SwiftPM links executables with `main` aliased to `fuzz_cascade_main`.
    @_cdecl("fuzz_cascade_main")
    func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        Fuzzing.run(fuzzCascade, argc: argc, argv: argv)
    }
#else
    @main
    struct Replay {
        static func main() throws {
            try Fuzzing.replay(fuzzCascade, paths: Array(CommandLine.arguments.dropFirst()))
        }
    }
#endif
