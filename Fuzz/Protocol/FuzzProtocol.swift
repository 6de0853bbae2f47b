// libFuzzer target for the serial protocol as the simulated servo reads it
// (`make fuzz`). Invariants checked on every input: the servo never leaves its
// limits, and decoding yields only well-formed commands that the firmware's
// state machine acts on exactly.
//
// Built with `-sanitize=fuzzer -DFUZZING`, libFuzzer drives
// `LLVMFuzzerTestOneInput`; a normal build replays the files named on the
// command line (the committed corpus, as a regression test).
import SentryCore
import ServoSim

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtocol(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var servo = ServoController(limits: 10...170)
    var time = 0.0
    for byte in bytes {
        servo.receive(byte, at: time)
        time += 0.001 + Double(byte % 7) * 0.01
        precondition((10...170).contains(servo.pan) && (10...170).contains(servo.tilt), "servo left its limits")
    }
    servo.advance(to: time + 10)
    precondition((10...170).contains(servo.pan), "sweep left the limits")
    for command in Command.decode(bytes) {
        switch command {
        case .pan(let angle), .tilt(let angle): precondition((0...180).contains(angle), "decoded angle \(angle)")
        case .lost: break
        }
        precondition(Command.decode(command.bytes) == [command], "\(command) does not survive a round trip")
    }
    // After any garbage, a valid command still works.
    servo.receive(UInt8(ascii: "X"), at: time + 11)
    for byte in "90.".utf8 { servo.receive(byte, at: time + 11) }
    precondition(servo.pan == 90 && !servo.isScanning, "X90. ignored after garbage")
    return 0
}

#if FUZZING
// SwiftPM links executables with `main` aliased to `fuzz_protocol_main`, so that
// symbol starts libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzer(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ body: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("fuzz_protocol_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc, arguments = argv
    return runFuzzer(&count, &arguments, fuzzProtocol)
}
#else
import Foundation

@main
struct Replay {
    static func main() throws {
        for path in CommandLine.arguments.dropFirst() {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            _ = data.withUnsafeBytes { fuzzProtocol($0.bindMemory(to: UInt8.self).baseAddress ?? UnsafePointer(bitPattern: 1)!, data.count) }
        }
        print("replayed \(CommandLine.arguments.count - 1) inputs")
    }
}
#endif
