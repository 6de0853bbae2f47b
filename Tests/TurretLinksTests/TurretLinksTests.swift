import Serial
import Testing
@testable import TurretLinks

@Suite("SHA-1, for the WebSocket handshake's accept key")
struct SHA1Tests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("FIPS 180-1's test vectors", arguments: [
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
    ])
    func vectors(_ message: String, _ digest: String) {
        #expect(Self.hex(SHA1.digest(Array(message.utf8))) == digest)
    }

    @Test("a million a's: a message of many blocks")
    func longMessage() {
        #expect(Self.hex(SHA1.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test("RFC 6455's example handshake: the accept key for dGhlIHNhbXBsZSBub25jZQ==")
    func handshakeExample() {
        let digest = SHA1.digest(Array("dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11".utf8))
        #expect(Self.hex(digest) == "b37a4f2cc0624f1690f64606cf385945b2bec4ea")
    }
}

@Suite("The link's reconnect schedule and errors")
struct LinkTests {
    @Test("an attempt is due at once, then every retry interval; retryNow makes one due again")
    func schedule() {
        var schedule = ReconnectSchedule()
        var due: [Bool] = []
        due.append(schedule.attemptIsDue(at: 10))
        due.append(schedule.attemptIsDue(at: 10.2))
        due.append(schedule.attemptIsDue(at: 10 + ReconnectSchedule.retryInterval))
        schedule.retryNow()
        due.append(schedule.attemptIsDue(at: 10.6))
        schedule.wentDown(at: 20)
        due.append(schedule.attemptIsDue(at: 20.1))
        due.append(schedule.attemptIsDue(at: 20.5))
        #expect(due == [true, false, true, true, false, true])
    }

    @Test("came back is told once")
    func cameBackOnce() {
        var schedule = ReconnectSchedule()
        var told = [schedule.takeReconnected()]
        schedule.cameBack()
        told += [schedule.takeReconnected(), schedule.takeReconnected()]
        #expect(told == [false, true, false])
    }

    @Test("a serial port's error and a relay's are each named as what they are")
    func errorNames() {
        let serial = LinkError(SerialError(.notFound, path: "/dev/ttyACM9", reason: "no such device", hint: "plug it in"))
        #expect(serial.description == "serial port /dev/ttyACM9: no such device; plug it in")
        #expect(serial.kind == .serialPort(.notFound))
        let relay = LinkError(.relayUnreachable, link: "relay ws://pi:12354/", reason: "connection refused", hint: "start sentry relay there")
        #expect(relay.description == "relay ws://pi:12354/: connection refused; start sentry relay there")
        #expect(LinkState.reconnecting.description == "reconnecting")
    }
}
