import FoundationEssentials

/// One WebSocket frame (RFC 6455 §5.2), its payload unmasked.
public struct WebSocketFrame: Equatable, Sendable {
    public var fin: Bool
    public var opcode: UInt8
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: UInt8, payload: [UInt8]) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    public static let text: UInt8 = 0x1
    public static let binary: UInt8 = 0x2
    public static let close: UInt8 = 0x8
    public static let ping: UInt8 = 0x9
    public static let pong: UInt8 = 0xA
}

/// Frames out of the bytes a peer sent, and frames to send. Every length is
/// checked before it is used in arithmetic or allocation, and a frame over the
/// reader's limit is refused from its header, before its payload is read: a
/// hostile or broken peer gets its connection closed, never a crash or an
/// unbounded buffer (SPEC §7).
public enum WebSocketFrames {
    /// Who sent the bytes: a client masks every frame, a server none (RFC 6455 §5.1).
    public enum Sender: Sendable {
        case client, server
    }

    /// Why a frame is refused, in words for the log, and the close code that says so.
    public struct Refusal: Error, Equatable {
        public let reason: String
        /// 1009 for a frame over the limit, 1002 for a protocol error.
        public let code: UInt16
    }

    /// The first whole frame at the start of `bytes` and the bytes it took, or
    /// `nil` while more are needed. A frame whose header announces more than
    /// `largestPayload` bytes is refused as soon as the header is in.
    public static func next(in bytes: ArraySlice<UInt8>, from sender: Sender, largestPayload: Int) throws(Refusal) -> (
        frame: WebSocketFrame, size: Int
    )? {
        guard bytes.count >= 2 else { return nil }
        let start = bytes.startIndex
        let first = bytes[start], second = bytes[start + 1]
        let opcode = first & 0x0F
        // No extension was agreed, so the RSV bits are 0; opcodes 3-7 and B-F are reserved.
        guard first & 0x70 == 0, [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(opcode) else {
            throw Refusal(reason: "not a WebSocket frame (first byte 0x\(String(first, radix: 16, uppercase: true)))", code: 1002)
        }
        let masked = second & 0x80 != 0
        switch sender {
        case .server where masked: throw Refusal(reason: "a masked frame (a server never masks)", code: 1002)
        case .client where !masked: throw Refusal(reason: "an unmasked frame (a client always masks)", code: 1002)
        default: break
        }
        var header = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = UInt64(bytes[start + 2]) << 8 | UInt64(bytes[start + 3])
            header = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[(start + 2)..<(start + 10)].reduce(0) { $0 << 8 | UInt64($1) }
            header = 10
        }
        if opcode & 0x08 != 0, length > 125 || first & 0x80 == 0 {
            throw Refusal(reason: "a control frame of \(length) bytes or fragmented (at most 125, whole)", code: 1002)
        }
        guard length <= UInt64(largestPayload) else {
            throw Refusal(reason: "a frame of \(length) bytes (at most \(largestPayload) are taken)", code: 1009)
        }
        let mask = masked ? 4 : 0
        guard bytes.count >= header + mask else { return nil }
        let size = header + mask + Int(length)
        guard bytes.count >= size else { return nil }
        var payload = Array(bytes[(start + header + mask)..<(start + size)])
        if masked {
            let key = bytes[(start + header)..<(start + header + 4)].map { $0 }
            for index in payload.indices { payload[index] ^= key[index & 3] }
        }
        return (WebSocketFrame(fin: first & 0x80 != 0, opcode: opcode, payload: payload), size)
    }

    /// `frame` on the wire: masked with a fresh key when a client sends it, unmasked from a server.
    public static func encode(_ frame: WebSocketFrame, from sender: Sender) -> [UInt8] {
        let maskBit: UInt8 = sender == .client ? 0x80 : 0
        var bytes: [UInt8] = [(frame.fin ? 0x80 : 0) | frame.opcode]
        let count = frame.payload.count
        if count < 126 {
            bytes.append(maskBit | UInt8(count))
        } else if count <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(count) >> UInt64($0 * 8)) }
        }
        guard sender == .client else { return bytes + frame.payload }
        let key = (0..<4).map { _ in UInt8.random(in: 0...255) }
        return bytes + key + frame.payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
    }

    /// A close frame's payload: the code, then the reason cut to fit a control frame.
    public static func closePayload(code: UInt16, reason: String = "") -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8.prefix(123))
    }

    /// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key` (RFC 6455 §4.2.2).
    public static func acceptValue(forKey key: String) -> String {
        Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }
}
