// What the fuzz targets share: starting libFuzzer (in fuzz builds, `FUZZING`)
// and replaying a corpus (in normal builds, for the regression test).
import Foundation

/// A libFuzzer entry point: one input, 0 when it was handled.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>, Int) -> CInt

public enum Fuzzing {
    #if FUZZING
        /// Hands control to libFuzzer's driver with the program's arguments.
        public static func run(_ target: FuzzTarget, argc: CInt, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
            var count = argc, arguments = argv
            return runFuzzerDriver(&count, &arguments, target)
        }
    #endif

    /// Runs each file through `target` and prints how many there were.
    public static func replay(_ target: FuzzTarget, paths: [String]) throws {
        for path in paths {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            _ = data.withUnsafeBytes { raw in
                target(raw.bindMemory(to: UInt8.self).baseAddress ?? UnsafePointer(bitPattern: 1)!, data.count)
            }
        }
        print("replayed \(paths.count) inputs")
    }
}

#if FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ body: FuzzTarget
    ) -> CInt
#endif
