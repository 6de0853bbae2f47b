import Testing
import TurretProtocol

@Suite("Serial protocol encoding and decoding (SPEC §3)")
struct CommandTests {
    @Test("commands encode to exactly the protocol's ASCII bytes")
    func encoding() {
        #expect(Command.pan(90).bytes == Array("X90.".utf8))
        #expect(Command.pan(0).bytes == Array("X0.".utf8))
        #expect(Command.tilt(180).bytes == Array("Y180.".utf8))
        #expect(Command.lost.bytes == [UInt8(ascii: "L")])
        #expect(Command.fire(93).bytes == Array("F93.".utf8))
    }

    @Test(
        "decoding reads what the firmware would act on",
        arguments: [
            ("X90.", [Command.pan(90)]),
            ("X90.Y45.L", [.pan(90), .tilt(45), .lost]),
            ("X181.", []),
            ("X1800.", []),
            ("X999999.", []),
            ("X-5.", []),
            ("XX90.", [.pan(90)]),
            (".", []),
            ("X", []),
            ("X.", []),
            ("X12L", [.lost]),
            ("X180.X0.", [.pan(180), .pan(0)]),
            ("\u{FF}X\u{80}90.", []),
            ("X0090.", []),
            ("X090.", [.pan(90)]),
            ("X90.F90.", [.pan(90), .fire(90)]),
            ("F", []),
            ("F9", []),
            ("F.", []),
            ("F1800.", []),
            ("F181.", []),
            ("X9F0.", [.fire(0)]),
            ("F9X0.", [.pan(0)]),
            ("F9L", [.lost]),
            ("f90.", []),
            ("F 90.", []),
        ])
    func decoding(input: String, expected: [Command]) {
        let bytes: [UInt8] = input.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        #expect(Command.decode(bytes) == expected)
    }
}

@Suite("Outgoing queue for a slow port")
struct OutgoingQueueTests {
    @Test("a newer aim replaces one that has not started to go out")
    func newestAimWins() {
        var queue = OutgoingQueue()
        queue.enqueue(.pan(10))
        queue.enqueue(.pan(20))
        queue.enqueue(.pan(30))
        #expect(queue.pendingBytes == Array("X30.".utf8))
    }

    @Test("L replaces a waiting pan aim; tilt waits on its own")
    func axes() {
        var queue = OutgoingQueue()
        queue.enqueue(.pan(10))
        queue.enqueue(.tilt(50))
        queue.enqueue(.lost)
        #expect(queue.pendingBytes == Array("Y50.L".utf8))
    }

    @Test("a waiting shot is dropped by a new aim: it confirmed the old one")
    func staleShot() {
        var queue = OutgoingQueue()
        queue.enqueue(.pan(90))
        queue.enqueue(.fire(90))
        queue.enqueue(.pan(95))
        #expect(queue.pendingBytes == Array("X95.".utf8))
        queue.enqueue(.fire(95))
        queue.enqueue(.tilt(80))
        #expect(queue.pendingBytes == Array("X95.Y80.".utf8))
    }

    @Test("a command written in part is finished before anything else")
    func partialWriteCompletes() {
        var queue = OutgoingQueue()
        queue.enqueue(.pan(120))
        queue.markWritten(2)
        queue.enqueue(.pan(60))
        #expect(queue.pendingBytes == Array("20.X60.".utf8))
        queue.markWritten(5)
        #expect(queue.pendingBytes == Array("0.".utf8))
        queue.markWritten(2)
        #expect(queue.isEmpty)
    }
}
