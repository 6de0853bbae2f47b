import Testing
import TurretLinks
import TurretProtocol

@Suite("A trimmed link")
struct TrimmedOutputTests {
    /// Records what reaches the link; fails while `isDown`; reports a reconnect when told.
    final class Recording: CommandOutput {
        var sent: [Command] = []
        var calls = 0
        var isDown = false
        var cameBack = false
        var bytesWritten: Int { 0 }
        var state: LinkState { isDown ? .reconnecting : .ok }
        func send(_ commands: [Command]) throws(LinkError) {
            calls += 1
            if isDown { throw LinkError(.relayUnreachable, link: "test", reason: "down", hint: "") }
            sent += commands
        }
        func flush(timeout: Double) throws(LinkError) {}
        func takeReconnected() -> Bool { defer { cameBack = false }; return cameBack }
    }

    @Test("every angle written carries the trim")
    func trims() throws {
        let link = Recording()
        let trimmed = TrimmedCommandOutput(link, trim: ServoTrim(pan: 6, tilt: -3))
        try trimmed.send([.pan(90), .tilt(80)])
        try trimmed.send([.fire(90), .lost, .pan(100)])
        #expect(link.sent == [.pan(96), .tilt(77), .fire(96), .lost, .pan(106)])
    }

    @Test("two aims that trim to the same end angle are written once; shots always")
    func clampedDuplicates() throws {
        let link = Recording()
        let trimmed = TrimmedCommandOutput(link, trim: ServoTrim(pan: 5))
        try trimmed.send([.pan(178)])
        try trimmed.send([.pan(179)])
        try trimmed.send([.fire(179)])
        try trimmed.send([.fire(179)])
        try trimmed.send([.lost])
        try trimmed.send([.pan(179)])
        #expect(link.sent == [.pan(180), .fire(180), .fire(180), .lost, .pan(180)])
        // Every call reaches the link, with nothing to write too: a relay is serviced from it.
        try trimmed.send([])
        #expect(link.calls == 7)
    }

    @Test("an aim the link refused, or one before the board rebooted, is written again")
    func rewrittenAfterFailureAndReboot() throws {
        let link = Recording()
        let trimmed = TrimmedCommandOutput(link, trim: ServoTrim(pan: 5))
        link.isDown = true
        #expect(throws: LinkError.self) { try trimmed.send([.pan(179)]) }
        link.isDown = false
        try trimmed.send([.pan(179)])
        link.cameBack = true
        #expect(trimmed.takeReconnected())
        try trimmed.send([.pan(178)])
        #expect(link.sent == [.pan(180), .pan(180)])
    }

    @Test("a new trim re-aims each axis held with the next send; a sweep is left sweeping")
    func newTrim() throws {
        let link = Recording()
        let trimmed = TrimmedCommandOutput(link, trim: ServoTrim(pan: 2, tilt: 1))
        try trimmed.send([.pan(90), .tilt(80)])
        trimmed.change(trim: ServoTrim(pan: 5, tilt: 1))
        try trimmed.send([])
        try trimmed.send([.lost])
        trimmed.change(trim: ServoTrim(pan: 0, tilt: 0))
        try trimmed.send([])
        #expect(link.sent == [.pan(92), .tilt(81), .pan(95), .lost, .tilt(80)])
    }
}
