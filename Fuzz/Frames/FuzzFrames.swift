// libFuzzer target for the frames a relay sends to sentry's `ws://` link
// (`make fuzz`), seeded with the frames that crashed or bloated it (issue 37).
// Invariants checked on every input: parsing never traps; a frame taken fits in
// the bytes given, with its header, and its payload is within the link's limit
// (a control frame within 125 bytes); the bytes after it parse on the same terms.
//
// Built with `-sanitize=fuzzer -DFUZZING`, libFuzzer drives
// `LLVMFuzzerTestOneInput`; a normal build replays the files named on the
// command line (the committed corpus, as a regression test).
import FuzzSupport
import TurretLinks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes = ArraySlice(UnsafeBufferPointer(start: data, count: size))
    while true {
        let next: (frame: ServerFrame, size: Int)?
        do {
            next = try ServerFrames.next(in: bytes)
        } catch {
            return 0  // refused: the link closes the connection
        }
        guard let (frame, taken) = next else { return 0 }
        precondition(taken >= 2 && taken <= bytes.count, "a frame of \(taken) bytes out of \(bytes.count)")
        precondition(frame.payload.count <= ServerFrames.largestPayload, "a payload over the limit")
        precondition(frame.opcode & 0x08 == 0 || frame.payload.count <= 125, "a control frame over 125 bytes")
        precondition(taken - frame.payload.count <= 10, "a header of more than 10 bytes")
        bytes = bytes.dropFirst(taken)
    }
}

#if FUZZING
    // SwiftPM links executables with `main` aliased to `fuzz_frames_main`.
    @_cdecl("fuzz_frames_main")
    func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        Fuzzing.run(fuzzFrames, argc: argc, argv: argv)
    }
#else
    @main
    struct Replay {
        static func main() throws {
            try Fuzzing.replay(fuzzFrames, paths: Array(CommandLine.arguments.dropFirst()))
        }
    }
#endif
