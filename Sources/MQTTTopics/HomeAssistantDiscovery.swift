import FoundationEssentials
import Events
import MQTT
import Tracking

/// Home Assistant's MQTT discovery for one sentry: a device with its
/// entities, each a retained config under
/// `homeassistant/COMPONENT/sentry_NAME/OBJECT/config`, so that it appears
/// with no configuration (as Frigate's and ESPHome's devices do), and goes
/// when the configs are emptied (`sentry mqtt --forget NAME`).
public struct HomeAssistantDiscovery: Sendable {
    public let topics: SentryTopics
    /// sentry's version, Home Assistant's `sw_version`.
    public let version: String

    public init(topics: SentryTopics, version: String) {
        self.topics = topics
        self.version = version
    }

    var nodeID: String { "sentry_" + String(topics.name.map { $0 == "-" ? "_" : $0 }) }

    /// Each entity's component, object id and config.
    var entities: [(component: String, object: String, config: [String: JSONValue])] {
        let state = topics.state
        return [
            ("binary_sensor", "face", [
                "name": "Face", "device_class": "occupancy", "state_topic": .text(state),
                "value_template": "{{ 'ON' if value_json.faces > 0 else 'OFF' }}",
            ]),
            ("binary_sensor", "armed", [
                "name": "Armed", "device_class": "safety", "state_topic": .text(state), "icon": "mdi:target",
                "value_template": "{{ 'ON' if value_json.armed else 'OFF' }}",
            ]),
            ("sensor", "pan", ["name": "Pan", "unit_of_measurement": "°", "state_topic": .text(state), "value_template": "{{ value_json.pan }}"]),
            ("sensor", "tilt", ["name": "Tilt", "unit_of_measurement": "°", "state_topic": .text(state), "value_template": "{{ value_json.tilt }}"]),
            // With --known: who the target is (a name or `stranger`); `none` with no target read.
            ("sensor", "person", [
                "name": "Person", "icon": "mdi:account-question", "state_topic": .text(state), "value_template": "{{ value_json.person | default('none') }}",
            ]),
            ("select", "mode", [
                "name": "Mode", "command_topic": .text(topics.command), "options": .list(SteeringRequest.words.map(\.action)), "state_topic": .text(state),
                "value_template": "{{ {'auto': 'auto', 'manual-scan': 'scan'}.get(value_json.steering, 'center') }}",
            ]),
            ("switch", "expressions", [
                "name": "Read expressions", "command_topic": .text(topics.set), "payload_on": "{\"expressions\": true}",
                "payload_off": "{\"expressions\": false}", "state_topic": .text(state), "value_template": "{{ 'ON' if value_json.expressions else 'OFF' }}",
                "state_on": "ON", "state_off": "OFF",
            ]),
            ("event", "event", [
                "name": "Event", "state_topic": .text(topics.event), "event_types": .list(EventKind.allCases.map(\.rawValue)),
                // Only expression events carry `expression`, only a recognised target's `person`: a key an event
                // lacks must render as null, never as Jinja's undefined, which tojson cannot write (Home Assistant
                // then drops the event).
                "value_template":
                    "{{ {'event_type': value_json.kind, 'expression': value_json.expression | default(none), 'person': value_json.person | default(none), 'id': value_json.id} | tojson }}",
            ]),
            ("image", "face_picture", ["name": "Last face", "image_topic": .text(topics.face), "content_type": "image/jpeg"]),
        ]
    }

    /// The configs, retained.
    public var messages: [MQTTMessage] {
        let device: [String: JSONValue] = [
            "identifiers": .list([nodeID]), "name": .text("sentry \(topics.name)"), "model": "face-tracking turret", "manufacturer": "sentry",
            "sw_version": .text(version),
        ]
        return entities.map { entity in
            var config = entity.config
            config["unique_id"] = .text("\(nodeID)_\(entity.object)")
            config["object_id"] = .text("\(nodeID)_\(entity.object)")
            config["availability_topic"] = .text(topics.availability)
            config["device"] = .object(device)
            return MQTTMessage(topic: topic(entity.component, entity.object), payload: SentryTopics.json(config), qos: 1, retain: true)
        }
    }

    /// Empty retained configs: Home Assistant removes the device (`sentry mqtt --forget NAME`).
    public var removals: [MQTTMessage] {
        entities.map { MQTTMessage(topic: topic($0.component, $0.object), payload: [], qos: 1, retain: true) }
    }

    func topic(_ component: String, _ object: String) -> String { "homeassistant/\(component)/\(nodeID)/\(object)/config" }
}

/// The JSON a discovery config holds.
enum JSONValue: Encodable, ExpressibleByStringLiteral, Sendable {
    case text(String)
    case list([String])
    indirect case object([String: JSONValue])

    init(stringLiteral value: String) { self = .text(value) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let value): try container.encode(value)
        case .list(let values): try container.encode(values)
        case .object(let values): try container.encode(values)
        }
    }
}
