import Foundation
import Serial
import Synchronization
import Testing
@testable import TurretLinks

@Suite("SHA-1, for the WebSocket handshake's accept key")
struct SHA1Tests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(
        "FIPS 180-1's test vectors",
        arguments: [
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

@Suite("A relay's frames: lengths checked before they are used, whatever the relay sends")
struct ServerFrameTests {
    static func frame(_ bytes: [UInt8]) throws -> (frame: ServerFrame, size: Int)? {
        try ServerFrames.next(in: bytes[...])
    }

    @Test("a ping and a close are read whole; a part of one waits for the rest")
    func wholeFrames() throws {
        let ping: [UInt8] = [0x89, 0x02, 0x68, 0x69]
        #expect(try Self.frame(ping)?.frame == ServerFrame(opcode: 0x9, payload: [0x68, 0x69]))
        #expect(try Self.frame(ping)?.size == 4)
        #expect(try Self.frame(Array(ping.prefix(3))) == nil)
        #expect(try Self.frame([0x88]) == nil)
        let text = [0x81, 126, 0x01, 0x00] + [UInt8](repeating: 0x41, count: 256)
        #expect(try Self.frame(text)?.frame.payload.count == 256)
    }

    @Test(
        "the frames that crashed or bloated sentry are refused from their header",
        arguments: [
            [0x81, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0],  // a 64-bit length with its top bit set (the crash)
            [0x81, 0x7F, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0],  // a length near 2^63
            [0x81, 0x7F, 0, 0, 0, 0, 0x06, 0x40, 0, 0],  // 100 MB
            [0x81, 0x7E, 0x10, 0x01],  // just over the limit
            [0x89, 0x7E, 0x00, 0x80],  // a ping of 128 bytes
            [0x81, 0x85, 1, 2, 3, 4, 0, 0, 0, 0, 0],  // masked by the server
            [0x47, 0x45],  // "GE": text, not frames (a reserved opcode)
            [0xC1, 0x00],  // an RSV bit set, with no extension agreed
        ] as [[UInt8]])
    func refused(_ bytes: [UInt8]) {
        #expect(throws: ServerFrames.Refusal.self) { try Self.frame(bytes) }
    }
}

@Suite("A relay's name is looked up off the frame thread")
struct AddressLookupTests {
    @Test("a reconnection never waits for a slow name server: it takes the last address and looks again behind it")
    func neverWaits() throws {
        let lookups = Mutex(0)
        let lookup = AddressLookup(host: "pi.local") { _ in
            lookups.withLock { $0 += 1 }
            Thread.sleep(forTimeInterval: 0.5)
            return 0x0100_007F
        }
        let start = Date()
        #expect(lookup.latest() == nil, "nothing found yet: this attempt fails, the lookup goes on")
        #expect(lookup.latest() == nil)
        #expect(Date().timeIntervalSince(start) < 0.1, "neither call waited")
        #expect(lookups.withLock { $0 } <= 1, "one lookup at a time")
        let deadline = Date().addingTimeInterval(3)
        var found: UInt32?
        while found == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            found = lookup.latest()
        }
        #expect(found == 0x0100_007F)
    }

    @Test("an IP literal is its own address, with no lookup")
    func literal() {
        let lookup = AddressLookup(host: "127.0.0.1") { _ in
            Issue.record("looked up a literal")
            return nil
        }
        #expect(lookup.latest() == 0x0100_007F)
        #expect(lookup.lookUpNow() == 0x0100_007F)
    }
}
