// libFuzzer target for WebSocket frames (`make fuzz`): every input is read as
// a relay's frames to sentry's `ws://` link and as a client's frames to sentry's
// servers, seeded with the frames that crashed or bloated the link (issue 37).
// Invariants checked on every input: parsing never traps; a frame taken fits in
// the bytes given, with its header, and its payload is within the reader's limit
// (a control frame within 125 bytes); the bytes after it parse on the same terms.
//
// In a fuzz build (`SENTRY_FUZZING=1`: Package.swift adds the sanitizers and
// `FUZZING`), libFuzzer drives `LLVMFuzzerTestOneInput`; a normal build replays
// the files named on the command line (the committed corpus, as a regression test).
import FuzzSupport
import TurretLinks
import WebSocketFrames

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = ArraySlice(UnsafeBufferPointer(start: data, count: size))
    readAll(input, from: .server, limit: WebSocketCommandOutput.largestFrame)
    readAll(input, from: .client, limit: 1024)  // the relay takes messages of 1 KiB at most
    return 0
}

/// Frames from `bytes` until one is refused (the reader closes the connection) or more bytes are needed.
func readAll(_ bytes: ArraySlice<UInt8>, from sender: WebSocketFrames.Sender, limit: Int) {
    var bytes = bytes
    while true {
        let next: (frame: WebSocketFrame, size: Int)?
        do {
            next = try WebSocketFrames.next(in: bytes, from: sender, largestPayload: limit)
        } catch {
            return
        }
        guard let (frame, taken) = next else { return }
        precondition(taken >= 2 && taken <= bytes.count, "a frame of \(taken) bytes out of \(bytes.count)")
        precondition(frame.payload.count <= limit, "a payload over the limit")
        precondition(frame.opcode & 0x08 == 0 || frame.payload.count <= 125, "a control frame over 125 bytes")
        precondition(taken - frame.payload.count <= (sender == .client ? 14 : 10), "a header too long")
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
