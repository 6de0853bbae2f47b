// libFuzzer target for a broker's bytes to sentry's MQTT client (`make fuzz`):
// every input is read as what a broker sent, whole and cut in two, seeded
// with the packets a broker sends and the hostile ones the tests play.
// Invariants checked on every input: reading never traps; nothing over the
// reader's limit is kept; a packet read encodes to exactly the bytes it was
// read from; the same bytes cut anywhere read as the same packets.
//
// In a fuzz build (`SENTRY_FUZZING=1`: Package.swift adds the sanitizers and
// `FUZZING`), libFuzzer drives `LLVMFuzzerTestOneInput`; a normal build replays
// the files named on the command line (the committed corpus, as a regression test).
import FuzzSupport
import MQTT

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMQTT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = readAll([input[...]])
    let cut = input.count / 2
    let pieces = readAll([input[..<cut], input[cut...]])
    precondition(whole.packets.map(\.0) == pieces.packets.map(\.0) && whole.refused == pieces.refused, "cutting the bytes changed what was read")
    for (packet, bytes) in whole.packets { precondition(packet.bytes == bytes, "\(packet) re-encodes to other bytes") }
    return 0
}

/// Every packet read from `chunks` in turn, with the bytes it came from, and whether the reader refused the rest.
func readAll(_ chunks: [ArraySlice<UInt8>]) -> (packets: [(MQTTPacket, [UInt8])], refused: Bool) {
    var reader = MQTTPacketReader(maximumPacket: 1024)
    var packets: [(MQTTPacket, [UInt8])] = []
    var consumed = 0
    let all = chunks.flatMap { $0 }
    for chunk in chunks {
        reader.append(chunk)
        while true {
            let packet: MQTTPacket?
            do {
                packet = try reader.next()
            } catch {
                return (packets, true)
            }
            guard let packet else { break }
            let length = packet.bytes.count
            precondition(length <= 1024 && consumed + length <= all.count, "a packet larger than what came")
            packets.append((packet, Array(all[consumed..<consumed + length])))
            consumed += length
        }
    }
    return (packets, false)
}

#if FUZZING
    // SwiftPM links executables with `main` aliased to `fuzz_mqtt_main`.
    @_cdecl("fuzz_mqtt_main")
    func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        Fuzzing.run(fuzzMQTT, argc: argc, argv: argv)
    }
#else
    @main
    struct Replay {
        static func main() throws {
            try Fuzzing.replay(fuzzMQTT, paths: Array(CommandLine.arguments.dropFirst()))
        }
    }
#endif
