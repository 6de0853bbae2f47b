import Foundation
import Testing
import WebSocketFrames

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

@Suite("A relay's frames: lengths checked before they are used, whatever the relay sends")
struct ServerFrameTests {
    static func frame(_ bytes: [UInt8]) throws -> (frame: WebSocketFrame, size: Int)? {
        try WebSocketFrames.next(in: bytes[...], from: .server, largestPayload: 4096)
    }

    @Test("a ping and a close are read whole; a part of one waits for the rest")
    func wholeFrames() throws {
        let ping: [UInt8] = [0x89, 0x02, 0x68, 0x69]
        #expect(try Self.frame(ping)?.frame == WebSocketFrame(opcode: 0x9, payload: [0x68, 0x69]))
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
        #expect(throws: WebSocketFrames.Refusal.self) { try Self.frame(bytes) }
    }
}

@Suite("A client's frames: unmasked as they arrive, refused from their header when too large")
struct ClientFrameTests {
    static func frame(_ bytes: [UInt8]) throws -> (frame: WebSocketFrame, size: Int)? {
        try WebSocketFrames.next(in: bytes[...], from: .client, largestPayload: 1024)
    }

    @Test("a masked text frame is unmasked; what a client encodes reads back")
    func unmasked() throws {
        // RFC 6455 §5.7: a masked "Hello".
        let hello: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        #expect(try Self.frame(hello)?.frame == WebSocketFrame(opcode: 0x1, payload: Array("Hello".utf8)))
        #expect(try Self.frame(Array(hello.prefix(6))) == nil)
        let sent = WebSocketFrame(opcode: 0x1, payload: Array("X90.".utf8))
        #expect(try Self.frame(WebSocketFrames.encode(sent, from: .client))?.frame == sent)
        let long = WebSocketFrame(opcode: 0x2, payload: [UInt8](repeating: 7, count: 300))
        #expect(try Self.frame(WebSocketFrames.encode(long, from: .client))?.frame == long)
    }

    @Test("a server's frames go unmasked, with the 16- and 64-bit lengths")
    func serverEncoding() throws {
        #expect(WebSocketFrames.encode(WebSocketFrame(opcode: 0x8, payload: [0x03, 0xE8]), from: .server) == [0x88, 0x02, 0x03, 0xE8])
        let large = WebSocketFrames.encode(WebSocketFrame(opcode: 0x2, payload: [UInt8](repeating: 0, count: 70_000)), from: .server)
        #expect(Array(large.prefix(10)) == [0x82, 127, 0, 0, 0, 0, 0, 0x01, 0x11, 0x70])
    }

    @Test(
        "a frame over the limit, unmasked or a long control frame is refused with its close code",
        arguments: [
            ([0x81, 0xFE, 0x04, 0x01], 1009),  // 1025 bytes announced: refused before they arrive
            ([0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0], 1009),  // a 64-bit length with its top bit set
            ([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F], 1002),  // unmasked
            ([0x89, 0xFE, 0x00, 0x80], 1002),  // a ping of 128 bytes
            ([0x09, 0x80, 0, 0, 0, 0], 1002),  // a fragmented ping
        ] as [([UInt8], Int)])
    func refused(_ bytes: [UInt8], code: Int) {
        let refusal = #expect(throws: WebSocketFrames.Refusal.self) { try Self.frame(bytes) }
        #expect(refusal.map { Int($0.code) } == code)
    }
}
