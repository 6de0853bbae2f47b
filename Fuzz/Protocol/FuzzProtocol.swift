// libFuzzer target for the serial protocol as the simulated servo reads it
// (`make fuzz`). Invariants checked on every input: the servo never leaves its
// limits, a shot only ever comes from a whole fire command at a held,
// settled aim and never faster than the minimum interval, and decoding
// yields only well-formed commands that the firmware's state machine acts on
// exactly.
//
// In a fuzz build (`SENTRY_FUZZING=1`: Package.swift adds the sanitizers and
// `FUZZING`), libFuzzer drives `LLVMFuzzerTestOneInput`; a normal build replays
// the files named on the command line (the committed corpus, as a regression test).
import FuzzSupport
import ServoSim
import TurretProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtocol(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var servo = ServoController(limits: 10...170, linkTimeout: ServoController.bundledLinkTimeout)
    var time = 0.0
    var lastShot: Double?
    for byte in bytes {
        let shots = servo.shots
        servo.receive(byte, at: time)
        if servo.shots != shots {
            precondition(byte == UInt8(ascii: ".") && servo.isAimed && !servo.isScanning, "a shot without a whole fire command at a held aim")
            precondition(time - max(servo.panArrival, servo.tiltArrival) >= ServoController.fireSettle, "a shot before the horns can have arrived and settled")
            precondition(lastShot.map { time - $0 >= ServoController.fireMinimumInterval } ?? true, "shots too close")
            lastShot = time
        }
        time += 0.001 + Double(byte % 7) * 0.01
        precondition((10...170).contains(servo.pan) && (10...170).contains(servo.tilt), "servo left its limits")
    }
    servo.advance(to: time + 10)
    precondition((10...170).contains(servo.pan), "sweep left the limits")
    for command in Command.decode(bytes) {
        switch command {
        case .pan(let angle), .tilt(let angle), .fire(let angle): precondition((0...180).contains(angle), "decoded angle \(angle)")
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
    // SwiftPM links executables with `main` aliased to `fuzz_protocol_main`.
    @_cdecl("fuzz_protocol_main")
    func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        Fuzzing.run(fuzzProtocol, argc: argc, argv: argv)
    }
#else
    @main
    struct Replay {
        static func main() throws {
            try Fuzzing.replay(fuzzProtocol, paths: Array(CommandLine.arguments.dropFirst()))
        }
    }
#endif
