/// MQTT 3.1.1 (OASIS standard, 2014), the part a client needs: the packets
/// it sends and the ones a broker sends it, as values, with their bytes.
/// Written here because no Swift MQTT package is in the package mirror; it
/// is small: QoS 0 and 1, no QoS 2 (sentry subscribes at QoS 1 at most, so
/// a broker never sends it one).

/// A message on a topic.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    /// 0: at most once; 1: at least once (acknowledged, sent again until it is).
    public var qos: UInt8
    /// The broker keeps it for whoever subscribes later (a state, a picture).
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: UInt8 = 0, retain: Bool = false) {
        (self.topic, self.payload, self.qos, self.retain) = (topic, payload, qos, retain)
    }

    public init(topic: String, text: String, qos: UInt8 = 0, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }
}

/// Why a broker refused a connection (CONNACK's return code, §3.2.2.3), as a user would fix it.
public enum ConnectRefusal: UInt8, Sendable, Equatable, CustomStringConvertible {
    case unacceptableProtocolVersion = 1, identifierRejected, serverUnavailable, badUsernameOrPassword, notAuthorized

    public var description: String {
        switch self {
        case .unacceptableProtocolVersion: "it does not speak MQTT 3.1.1; use a broker that does (Mosquitto 1.3 or newer)"
        case .identifierRejected: "it rejected the client id; give another --mqtt-name"
        case .serverUnavailable: "it is unavailable for now"
        case .badUsernameOrPassword: "the user name or password is wrong; check --mqtt's user and --mqtt-password-file"
        // Mosquitto 2 answers a wrong password with this one too.
        case .notAuthorized: "it did not authorise this user; check the user in --mqtt, the password (--mqtt-password-file or SENTRY_MQTT_PASSWORD) and the broker's password file"
        }
    }
}

/// A control packet, either way.
public enum MQTTPacket: Sendable, Equatable {
    case connect(Connect)
    /// `sessionPresent`, and the refusal unless the broker accepted.
    case connack(sessionPresent: Bool, refusal: ConnectRefusal?)
    /// `id`: for QoS 1 (without one the message goes at QoS 0); `duplicate`: sent again after a reconnection.
    case publish(MQTTMessage, id: UInt16?, duplicate: Bool)
    case puback(id: UInt16)
    /// Topic filters, each with the highest QoS wanted.
    case subscribe(id: UInt16, filters: [(String, UInt8)])
    /// Per filter: the QoS granted, or nil where the broker refused it.
    case suback(id: UInt16, granted: [UInt8?])
    case pingreq
    case pingresp
    case disconnect

    public struct Connect: Sendable, Equatable {
        public var clientID: String
        public var keepAlive: UInt16
        public var username: String?
        public var password: [UInt8]?
        /// Published by the broker for us when we vanish without a DISCONNECT.
        public var will: MQTTMessage?
        public var cleanSession = true

        public init(clientID: String, keepAlive: UInt16, username: String? = nil, password: [UInt8]? = nil, will: MQTTMessage? = nil) {
            (self.clientID, self.keepAlive, self.username, self.password, self.will) = (clientID, keepAlive, username, password, will)
        }
    }

    public static func == (left: MQTTPacket, right: MQTTPacket) -> Bool { left.bytes == right.bytes }

    /// The packet on the wire.
    public var bytes: [UInt8] {
        var body = PacketBody()
        let first: UInt8
        switch self {
        case .connect(let connect):
            first = 0x10
            body.string("MQTT")
            body.byte(4)
            var flags: UInt8 = connect.cleanSession ? 0x02 : 0
            if let will = connect.will { flags |= 0x04 | will.qos << 3 | (will.retain ? 0x20 : 0) }
            if connect.username != nil { flags |= 0x80 }
            if connect.password != nil { flags |= 0x40 }
            body.byte(flags)
            body.number(connect.keepAlive)
            body.string(connect.clientID)
            if let will = connect.will {
                body.string(will.topic)
                body.data(will.payload)
            }
            if let username = connect.username { body.string(username) }
            if let password = connect.password { body.data(password) }
        case .connack(let sessionPresent, let refusal):
            first = 0x20
            body.byte(sessionPresent ? 1 : 0)
            body.byte(refusal?.rawValue ?? 0)
        case .publish(let message, let id, let duplicate):
            // Without a packet id it can only go at QoS 0, whatever the message asks.
            first = 0x30 | (duplicate ? 0x08 : 0) | (id == nil ? 0 : message.qos << 1) | (message.retain ? 1 : 0)
            body.string(message.topic)
            if let id { body.number(id) }
            body.bytes += message.payload
        case .puback(let id):
            first = 0x40
            body.number(id)
        case .subscribe(let id, let filters):
            first = 0x82
            body.number(id)
            for (filter, qos) in filters {
                body.string(filter)
                body.byte(qos)
            }
        case .suback(let id, let granted):
            first = 0x90
            body.number(id)
            for code in granted { body.byte(code ?? 0x80) }
        case .pingreq: first = 0xC0
        case .pingresp: first = 0xD0
        case .disconnect: first = 0xE0
        }
        return [first] + remainingLength(body.bytes.count) + body.bytes
    }
}

/// A packet's variable header and payload as they are built.
struct PacketBody {
    var bytes: [UInt8] = []
    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func number(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
    /// Two bytes of length, then the bytes (§1.5.3: strings are UTF-8 this way too).
    mutating func data(_ value: [UInt8]) {
        number(UInt16(value.count))
        bytes += value
    }
    mutating func string(_ value: String) { data(Array(value.utf8)) }
}

/// The largest remaining length MQTT can say: four bytes of seven bits.
let largestRemainingLength = 268_435_455

/// §2.2.3: seven bits a byte, least significant first, the high bit saying more follow.
func remainingLength(_ count: Int) -> [UInt8] {
    var bytes: [UInt8] = [], value = count
    repeat {
        var byte = UInt8(value & 0x7F)
        value >>= 7
        if value > 0 { byte |= 0x80 }
        bytes.append(byte)
    } while value > 0
    return bytes
}

extension MQTTMessage {
    /// Whether `topic` may be published to (§4.7): UTF-8 of 1 to 65,535 bytes, no wildcards, no NUL.
    public static func isValidTopic(_ topic: String) -> Bool {
        let bytes = Array(topic.utf8)
        return !bytes.isEmpty && bytes.count <= 65_535 && !bytes.contains(0) && !bytes.contains(UInt8(ascii: "+")) && !bytes.contains(UInt8(ascii: "#"))
    }
}
