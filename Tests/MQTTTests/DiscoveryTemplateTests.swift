import Events
import Foundation
import Geometry
import MQTT
import MQTTTopics
import Testing

/// Home Assistant renders each discovery config's `value_template` with
/// Jinja2; these render them with Jinja2 itself (Python's, as Home Assistant
/// does) against the payloads sentry publishes.
@Suite("Home Assistant's templates, rendered by Jinja2 against what sentry publishes")
struct DiscoveryTemplateTests {
    static let topics = try! SentryTopics(name: "hall")

    /// Each (template, payload) rendered; the outputs in order, or the error Jinja2 raised.
    static func render(_ cases: [(template: String, payload: [UInt8])]) throws -> [String] {
        let input = try JSONSerialization.data(withJSONObject: cases.map { ["template": $0.template, "payload": String(decoding: $0.payload, as: UTF8.self)] })
        let script = """
            import jinja2, json, sys
            environment = jinja2.Environment()
            for case in json.load(sys.stdin):
                try:
                    value_json = json.loads(case["payload"])
                    print(json.dumps(environment.from_string(case["template"]).render(value_json=value_json, value=case["payload"])))
                except Exception as error:
                    print(json.dumps("ERROR " + type(error).__name__ + ": " + str(error)))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let (stdin, stdout) = (Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try String(decoding: output, as: UTF8.self).split(separator: "\n").map { try JSONDecoder().decode(String.self, from: Data($0.utf8)) }
    }

    /// Each discovery config's value template, by the topic it reads.
    static func templates() throws -> [(stateTopic: String, template: String)] {
        try HomeAssistantDiscovery(topics: topics, version: "test").messages.compactMap { message in
            let config = try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]
            guard let template = config?["value_template"] as? String, let topic = config?["state_topic"] as? String else { return nil }
            return (topic, template)
        }
    }

    @Test("the event entity fires for every kind of event: arrive, lock, lost and shot carry no expression, and still render")
    func eventEntity() throws {
        let template = try #require(try Self.templates().first { $0.stateTopic == Self.topics.event }).template
        var records = EventKind.allCases.map { kind in
            EventRecord(kind: kind, unixTime: 1_800_000_000, frameTime: 1.5, frame: 3, box: Box(x: 1, y: 2, width: 30, height: 40), pan: 90, tilt: 80)
        }
        records[records.firstIndex { $0.kind == .expression }!].expression = "smile"
        records[records.firstIndex { $0.kind == .lock }!].person = "alice"
        let rendered = try Self.render(records.map { (template, Self.topics.event($0)[0].payload) })
        for (record, output) in zip(records, rendered) {
            let event = (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any]
            #expect(event != nil, "\(record.kind): Jinja2 gave \(output)")
            #expect(event?["event_type"] as? String == record.kind.rawValue, "\(record.kind): \(output)")
            #expect(event?["id"] as? String == record.id, "\(output)")
            #expect((event?["expression"] as? String) == record.expression, "\(output)")
            #expect((event?["person"] as? String) == record.person, "\(output)")
        }
    }

    @Test("every state template renders from the published state, armed or not, a person recognised or not")
    func stateEntities() throws {
        let stateTemplates = try Self.templates().filter { $0.stateTopic == Self.topics.state }
        #expect(stateTemplates.count >= 6)
        var cases: [(String, [UInt8])] = []
        for armed in [false, true] {
            let state = PublishedState(
                faces: armed ? 1 : 0, target: armed ? [1, 2, 30, 40] : nil, pan: 93, tilt: 71, mode: "Tracking — X: 93", locked: armed, steering: "auto",
                serial: "ok", fps: 25, expressions: armed, states: nil, armed: armed, person: armed ? "alice" : nil)
            cases += stateTemplates.map { ($0.template, Self.topics.state(state).payload) }
        }
        let rendered = try Self.render(cases)
        #expect(rendered.count == cases.count && !rendered.contains { $0.hasPrefix("ERROR") }, "\(rendered)")
        let armedSensor = try #require(stateTemplates.firstIndex { $0.template.contains("value_json.armed") })
        #expect(rendered[armedSensor] == "OFF" && rendered[stateTemplates.count + armedSensor] == "ON", "\(rendered)")
        let personSensor = try #require(stateTemplates.firstIndex { $0.template.contains("value_json.person") })
        #expect(rendered[personSensor] == "none" && rendered[stateTemplates.count + personSensor] == "alice", "\(rendered)")
    }
}
