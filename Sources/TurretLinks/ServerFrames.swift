/// One frame from a WebSocket server as the relay link reads it (RFC 6455 §5.2).
public struct ServerFrame: Equatable, Sendable {
    public var opcode: UInt8
    public var payload: [UInt8]
}

/// Frames out of the bytes a relay sent. Every length is checked before it is
/// used in arithmetic or allocation: a hostile or broken relay gets its
/// connection closed, never a crash or an unbounded buffer.
public enum ServerFrames {
    /// The largest payload taken. The link only needs a relay's close and ping
    /// frames (125 bytes at most) and ignores the rest; 4 KiB leaves room for
    /// a text frame a relay may one day send.
    public static let largestPayload = 4096

    /// Why a frame is refused, in words for the log.
    public struct Refusal: Error, Equatable {
        public let reason: String
    }

    /// The first whole frame at the start of `bytes` and the bytes it took, or
    /// `nil` while more are needed.
    public static func next(in bytes: ArraySlice<UInt8>) throws(Refusal) -> (frame: ServerFrame, size: Int)? {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[bytes.startIndex], second = bytes[bytes.startIndex + 1]
        let opcode = first & 0x0F
        // RFC 6455 §5.2: no extension was agreed, so the RSV bits are 0; opcodes 3-7 and B-F are reserved.
        guard first & 0x70 == 0, [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(opcode) else {
            throw Refusal(reason: String(format: "not a WebSocket frame (first byte 0x%02X)", first))
        }
        guard second & 0x80 == 0 else { throw Refusal(reason: "a masked frame (a server never masks)") }
        var header = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = UInt64(bytes[bytes.startIndex + 2]) << 8 | UInt64(bytes[bytes.startIndex + 3])
            header = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[(bytes.startIndex + 2)..<(bytes.startIndex + 10)].reduce(0) { $0 << 8 | UInt64($1) }
            header = 10
        }
        if opcode & 0x08 != 0, length > 125 { throw Refusal(reason: "a control frame of \(length) bytes (at most 125)") }
        guard length <= UInt64(largestPayload) else { throw Refusal(reason: "a frame of \(length) bytes (at most \(largestPayload) are taken)") }
        let size = header + Int(length)
        guard bytes.count >= size else { return nil }
        let payload = Array(bytes[(bytes.startIndex + header)..<(bytes.startIndex + size)])
        return (ServerFrame(opcode: opcode, payload: payload), size)
    }
}
