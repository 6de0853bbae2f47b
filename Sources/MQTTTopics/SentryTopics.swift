import Events
import FoundationEssentials
import MQTT
import Tracking

/// One sentry's topics on a broker, under `sentry/NAME/`, and what goes on
/// them: its availability (`online`/`offline`, retained, the latter also
/// its will), its state (JSON, retained), its events (JSON, QoS 1), the
/// face of its last event (JPEG, retained), and the replies to requests it
/// refused (`error`). It obeys `set` (live settings, as the console's
/// `POST /api/settings`) and `command` (as `POST /api/aim`, or a bare
/// `auto`, `scan`, `center`), on its own topics and on `sentry/all/` for a
/// whole fleet, and sends Home Assistant its discovery again when Home
/// Assistant says it is back (`homeassistant/status` = `online`).
public struct SentryTopics: Sendable {
    public let name: String
    public var base: String { "sentry/\(name)" }
    public var availability: String { "\(base)/availability" }
    public var state: String { "\(base)/state" }
    public var event: String { "\(base)/event" }
    /// The last event again, retained: what `sentry fleet` shows.
    public var lastEvent: String { "\(base)/last-event" }
    public var face: String { "\(base)/face" }
    public var set: String { "\(base)/set" }
    public var command: String { "\(base)/command" }
    public var error: String { "\(base)/error" }
    public static let fleet = "sentry/all"
    public static let homeAssistantStatus = "homeassistant/status"

    /// `name`: letters, digits, `-` and `_` (it is a topic level and a Home Assistant id); `all` is the fleet's.
    public init(name: String) throws(MQTTConnectionError) {
        guard !name.isEmpty, name.count <= 64, name != "all",
            name.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else {
            throw MQTTConnectionError("--mqtt-name '\(name)' must be 1 to 64 letters, digits, - or _ (and not 'all', the fleet's), e.g. --mqtt-name front-door")
        }
        self.name = name
    }

    /// What the client subscribes to.
    public var subscriptions: [String] { [set, command, "\(Self.fleet)/set", "\(Self.fleet)/command", Self.homeAssistantStatus] }

    public var online: MQTTMessage { MQTTMessage(topic: availability, text: "online", qos: 1, retain: true) }
    public var offline: MQTTMessage { MQTTMessage(topic: availability, text: "offline", qos: 1, retain: true) }

    public func state(_ state: PublishedState) -> MQTTMessage { MQTTMessage(topic: self.state, payload: Self.json(state), retain: true) }

    /// The event (QoS 1, not retained: Home Assistant's event entity would fire again on each restart) and the same as the last one (retained).
    public func event(_ record: EventRecord) -> [MQTTMessage] {
        let json = Self.json(record)
        return [MQTTMessage(topic: event, payload: json, qos: 1), MQTTMessage(topic: lastEvent, payload: json, retain: true)]
    }

    /// Empty retained messages on every retained topic: the broker forgets this sentry.
    public var forgotten: [MQTTMessage] {
        [availability, state, lastEvent, face].map { MQTTMessage(topic: $0, payload: [], qos: 1, retain: true) }
    }

    /// The name in a topic under `sentry/`, or nil for another topic or the fleet's.
    public static func name(in topic: String) -> String? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        // Only a name a sentry could have: anything else on the broker is someone else's (or hostile).
        guard levels.count == 3, levels[0] == "sentry", let topics = try? SentryTopics(name: String(levels[1])) else { return nil }
        return topics.name
    }

    public func face(_ jpeg: [UInt8]) -> MQTTMessage { MQTTMessage(topic: face, payload: jpeg, retain: true) }

    /// A refusal, with the topic and the payload it answers (cut to 200 bytes).
    public func error(_ description: String, answering message: MQTTMessage) -> MQTTMessage {
        struct Reply: Encodable {
            var error: String
            var topic: String
            var request: String
        }
        let request = String(decoding: message.payload.prefix(200), as: UTF8.self)
        // QoS 1, as events are: each request gets its own answer. At QoS 0 the client keeps only
        // a topic's newest message, and a second refusal in quick succession replaced the first.
        return MQTTMessage(topic: error, payload: Self.json(Reply(error: description, topic: message.topic, request: request)), qos: 1)
    }

    /// What a message on a subscribed topic asks for.
    public enum Request: Equatable {
        /// A JSON object of live settings.
        case settings([UInt8])
        /// A steering request as JSON (`{"action": …}`).
        case command([UInt8])
        case homeAssistantOnline
        /// Nothing sentry acts on (Home Assistant going offline).
        case none
    }

    public func request(in message: MQTTMessage) -> Request {
        switch message.topic {
        case set, "\(Self.fleet)/set": return .settings(message.payload)
        case command, "\(Self.fleet)/command":
            // Home Assistant's select sends the option itself: `scan`.
            let word = String(decoding: message.payload, as: UTF8.self)
            if SteeringRequest.words.contains(where: { $0.action == word }) { return .command(Array("{\"action\":\"\(word)\"}".utf8)) }
            return .command(message.payload)
        case Self.homeAssistantStatus: return message.payload == Array("online".utf8) ? .homeAssistantOnline : .none
        default: return .none
        }
    }

    static func json(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { Array($0) } ?? Array("{}".utf8)
    }
}

/// The state a sentry publishes: what a home's automations read.
public struct PublishedState: Codable, Equatable, Sendable {
    /// Faces in view.
    public var faces: Int
    /// The target's box, `[x, y, width, height]` in frame pixels.
    public var target: [Int]?
    /// The angles the turret was told.
    public var pan: Int
    public var tilt: Int
    /// The mode line (`Locked — X: 93`).
    public var mode: String
    public var locked: Bool
    /// `auto`, `manual` or `manual-scan`.
    public var steering: String
    public var serial: String
    public var fps: Int
    /// Whether the face is read, and its states (`smile`…) when it is.
    public var expressions: Bool
    public var states: [String]?
    /// Started with `--fire`: it may shoot (SPEC §8: armed is shown wherever
    /// the mode is). Always published; absent only in a state retained by an
    /// older sentry.
    public var armed: Bool?
    /// Why a locked target is not fired at, when armed (`fire point on a face`).
    public var heldFire: String?
    /// With `--known`: who the target is (a name, or `stranger`), once read.
    public var person: String?

    public init(
        faces: Int, target: [Int]?, pan: Int, tilt: Int, mode: String, locked: Bool, steering: String, serial: String, fps: Int, expressions: Bool,
        states: [String]?, armed: Bool = false, heldFire: String? = nil, person: String? = nil
    ) {
        (self.faces, self.target, self.pan, self.tilt, self.mode, self.locked) = (faces, target, pan, tilt, mode, locked)
        (self.steering, self.serial, self.fps, self.expressions, self.states) = (steering, serial, fps, expressions, states)
        (self.armed, self.heldFire, self.person) = (armed, heldFire, person)
    }

    /// The same state but for the frame rate, which wobbles: a change of it alone is not worth a message.
    public func sameApartFromRate(as other: PublishedState) -> Bool {
        var other = other
        other.fps = fps
        return other == self
    }
}
