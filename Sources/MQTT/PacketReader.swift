/// Why bytes from a broker are not MQTT a client takes, in one line. The
/// connection is closed on it: nothing after a bad packet can be trusted.
public struct MQTTProtocolError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Cuts a broker's bytes into packets, strictly: the remaining length is
/// read and checked against `maximumPacket` before anything is kept for the
/// body, so a length of 256 MB costs nothing; each packet's flags and size
/// are what §3 says they must be; only packets a broker sends a client are
/// taken.
public struct MQTTPacketReader: Sendable {
    /// The largest packet taken, header included.
    public let maximumPacket: Int
    private var buffer: [UInt8] = []

    public init(maximumPacket: Int = 64 * 1024) { self.maximumPacket = maximumPacket }

    /// The first byte of the next packet, once it has come: a client waiting
    /// for CONNACK knows from it alone whether the other side speaks MQTT.
    public var firstByte: UInt8? { buffer.first }

    /// Bytes as they came from the socket.
    public mutating func append(_ bytes: some Collection<UInt8>) { buffer += bytes }

    /// The next whole packet, nil until one has arrived.
    public mutating func next() throws(MQTTProtocolError) -> MQTTPacket? {
        guard let first = buffer.first else { return nil }
        var length = 0, index = 1
        while true {
            guard index < buffer.count else { return nil }
            guard index <= 4 else { throw MQTTProtocolError("a remaining length longer than four bytes (§2.2.3)") }
            let byte = buffer[index]
            length |= Int(byte & 0x7F) << (7 * (index - 1))
            index += 1
            if byte & 0x80 == 0 {
                // A last byte of 0 after others says nothing they did not: a length written longer than it is.
                guard byte != 0 || index == 2 else { throw MQTTProtocolError("a remaining length in more bytes than it needs (§2.2.3)") }
                break
            }
        }
        guard index + length <= maximumPacket else {
            throw MQTTProtocolError("a packet of \(index + length) bytes, over the \(maximumPacket) taken")
        }
        guard buffer.count >= index + length else { return nil }
        let body = Array(buffer[index..<index + length])
        buffer.removeFirst(index + length)
        return try Self.packet(first, body)
    }

    static func packet(_ first: UInt8, _ body: [UInt8]) throws(MQTTProtocolError) -> MQTTPacket {
        let (type, flags) = (first >> 4, first & 0x0F)
        var fields = Fields(body)
        func expect(flags wanted: UInt8, size: Int?, _ name: String) throws(MQTTProtocolError) {
            guard flags == wanted else { throw MQTTProtocolError("\(name) with flags \(flags), not \(wanted) (§2.2.2)") }
            if let size, body.count != size { throw MQTTProtocolError("\(name) of \(body.count) bytes, not \(size)") }
        }
        switch type {
        case 2:
            try expect(flags: 0, size: 2, "CONNACK")
            guard body[0] & 0xFE == 0 else { throw MQTTProtocolError("CONNACK with reserved flags set (§3.2.2.1)") }
            guard body[1] == 0 || ConnectRefusal(rawValue: body[1]) != nil else {
                throw MQTTProtocolError("CONNACK with return code \(body[1]), which 3.1.1 does not define")
            }
            return .connack(sessionPresent: body[0] == 1, refusal: ConnectRefusal(rawValue: body[1]))
        case 3:
            let qos = (flags >> 1) & 0x03
            guard qos > 0 || flags & 0x08 == 0 else { throw MQTTProtocolError("PUBLISH at QoS 0 marked as sent again (§3.3.1.1)") }
            guard qos < 2 else { throw MQTTProtocolError("PUBLISH at QoS \(qos); sentry subscribes at QoS 1 at most") }
            let topic = try fields.string("PUBLISH's topic")
            guard MQTTMessage.isValidTopic(topic) else { throw MQTTProtocolError("PUBLISH to a topic that is not one (§4.7.3)") }
            let id = qos > 0 ? try fields.number("PUBLISH's packet id") : nil
            if id == 0 { throw MQTTProtocolError("PUBLISH with packet id 0 (§2.3.1)") }
            return .publish(MQTTMessage(topic: topic, payload: fields.rest, qos: qos, retain: flags & 1 == 1), id: id, duplicate: flags & 0x08 != 0)
        case 4:
            try expect(flags: 0, size: 2, "PUBACK")
            return .puback(id: try fields.number("PUBACK's packet id"))
        case 9:
            try expect(flags: 0, size: nil, "SUBACK")
            let id = try fields.number("SUBACK's packet id")
            let codes = fields.rest
            guard !codes.isEmpty, codes.allSatisfy({ $0 <= 2 || $0 == 0x80 }) else { throw MQTTProtocolError("SUBACK with return codes \(codes) (§3.9.3)") }
            return .suback(id: id, granted: codes.map { $0 == 0x80 ? nil : $0 })
        case 13:
            try expect(flags: 0, size: 0, "PINGRESP")
            return .pingresp
        default:
            let names = [1: "CONNECT", 5: "PUBREC", 6: "PUBREL", 7: "PUBCOMP", 8: "SUBSCRIBE", 10: "UNSUBSCRIBE", 11: "UNSUBACK", 12: "PINGREQ", 14: "DISCONNECT"]
            throw MQTTProtocolError("a broker sent \(names[Int(type)] ?? "packet type \(type)"), which a client never takes")
        }
    }

    /// A packet's fields, read front to back.
    struct Fields {
        private var bytes: ArraySlice<UInt8>
        init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

        var rest: [UInt8] { Array(bytes) }

        mutating func number(_ what: String) throws(MQTTProtocolError) -> UInt16 {
            guard bytes.count >= 2 else { throw MQTTProtocolError("\(what) is cut short") }
            defer { bytes.removeFirst(2) }
            return UInt16(bytes[bytes.startIndex]) << 8 | UInt16(bytes[bytes.startIndex + 1])
        }

        /// A length and that many bytes of UTF-8 (§1.5.3: no NUL either).
        mutating func string(_ what: String) throws(MQTTProtocolError) -> String {
            let count = Int(try number(what))
            guard bytes.count >= count else { throw MQTTProtocolError("\(what) is cut short") }
            let raw = Array(bytes.prefix(count))
            bytes.removeFirst(count)
            guard let text = String(validating: raw, as: UTF8.self), !raw.contains(0) else { throw MQTTProtocolError("\(what) is not UTF-8 (§1.5.3)") }
            return text
        }
    }
}
