import Relay
import Testing
import TurretProtocol

@Suite("What the relay lets through: whole messages of valid commands, nothing else")
struct RelayVerdictTests {
    @Test(
        "messages of commands, one or several, separated or not",
        arguments: [
            ("X90.", [Command.pan(90)]),
            ("X90.Y45.L", [.pan(90), .tilt(45), .lost]),
            ("X90. L\n", [.pan(90), .lost]),
            ("F90.", [.fire(90)]),
            ("", []),
        ])
    func accepted(message: String, commands: [Command]) {
        #expect(RelayVerdict.text(Array(message.utf8), armed: true) == .commands(commands))
    }

    @Test("a relay started without --fire refuses any message that holds a shot, whole", arguments: ["F90.", "X90.F90.", "X90. F90.\n"])
    func unarmed(message: String) {
        #expect(RelayVerdict.text(Array(message.utf8)) == .refused(code: 1008, reason: "this relay was started without --fire: F (fire) is refused"))
        #expect(RelayVerdict.text(Array(message.utf8), armed: true) != RelayVerdict.text(Array(message.utf8)))
    }

    @Test(
        "anything else is refused whole, with the close code to answer",
        arguments: [
            ("X9 0.", UInt16(1007)),
            ("hello", 1007),
            ("X181.", 1007),
            ("X90.junk", 1007),
            ("X90", 1007),
            ("x90.", 1007),
        ])
    func refused(message: String, code: UInt16) {
        guard case .refused(let got, _) = RelayVerdict.text(Array(message.utf8)) else {
            Issue.record("\(message) was accepted")
            return
        }
        #expect(got == code)
    }

    @Test("oversized, not UTF-8, binary")
    func limits() {
        let big = Array(String(repeating: "X90.", count: 257).utf8)
        #expect(big.count > RelayVerdict.maximumSize)
        guard case .refused(1009, _) = RelayVerdict.text(big) else { Issue.record("oversized accepted"); return }
        guard case .refused(1007, _) = RelayVerdict.text([0x58, 0x39, 0xFF, 0x30, 0x2E]) else { Issue.record("invalid UTF-8 accepted"); return }
        guard case .refused(1003, _) = RelayVerdict.binary else { Issue.record("binary accepted"); return }
    }
}
