import Foundation
import Mosquitto
import Scratch
import TestClips
import Testing
import Waiting

/// Home Assistant's side of MQTT, as Home Assistant itself reads it: a real one
/// (2024.3.3 from PyPI, in the venv tools/setup makes outside the checkout)
/// started by the test against Mosquitto, through tools/homeassistant-check.
@Suite("sentry in a real Home Assistant, through the binary")
struct HomeAssistantTests {
    /// The venv's Python: `$SENTRY_TEST_CACHE`, else `$XDG_CACHE_HOME/sentry-tests`, else `~/.cache/sentry-tests`.
    static var python: String {
        let environment = ProcessInfo.processInfo.environment
        let cache =
            environment["SENTRY_TEST_CACHE"]
            ?? (environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/sentry-tests"
        return cache + "/homeassistant-2024.3.3/bin/python3"
    }

    @Test("discovery alone makes the device's entities, available, and the first arrival after it reaches Home Assistant; the mode and the expressions switch driven from Home Assistant reach sentry and come back as its state; an event of every kind fires the event entity, a lock naming who it is (--known), as the person sensor does; Home Assistant logs no error about any of it")
    func homeAssistant() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.python), "no Home Assistant at \(Self.python): make test's setup (tools/setup) installs it")
        let broker = try MosquittoBroker()
        let scratch = try ScratchDirectory("home-assistant")
        let password = try scratch.write(MosquittoBroker.tester.password + "\n", to: "password")
        let config = scratch.file("config").path, ready = scratch.file("ready").path
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        // Home Assistant first, as at home: then sentry starts with someone in view, its arrival
        // published right after its discovery (the first arrival was lost, before Home Assistant subscribed).
        let check = Process()
        check.executableURL = URL(fileURLWithPath: Self.python)
        check.arguments = [
            DemoClip.repository.appendingPathComponent("tools/homeassistant-check").path, "--broker-port", "\(broker.port)", "--user",
            MosquittoBroker.tester.user, "--password-file", password, "--name", "porch", "--config", config, "--timeout", "240", "--ready-file", ready,
        ]
        let output = scratch.file("report.json")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        check.standardOutput = try FileHandle(forWritingTo: output)
        try check.run()
        defer { if check.isRunning { check.terminate() } }
        #expect(eventually(within: 240) { FileManager.default.fileExists(atPath: ready) || !check.isRunning }, "Home Assistant did not start")
        // The household: the astronaut whose face visits (NASA's photograph, public domain: Tests/Fixtures/photos).
        try FileManager.default.createDirectory(at: scratch.file("known/eileen"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png"), to: scratch.file("known/eileen/1.png"))
        // A visit every 6 s, the first from 0.5 s on: an arrival, a lock, a shot, a held smile, a loss.
        let sentry = try MQTTRunTests.SentryOnBroker(
            broker, name: "porch", camera: Clips.visits,
            extra: [
                "--lock-after", "0.5", "--lost-after", "0.2", "--fire", "--pan-only-below-heads", "--fire-cooldown", "1", "--on-expression", "smile:1=true",
                "--known", scratch.file("known").path,
            ])
        check.waitUntilExit()
        let printed = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(sentry.stop() == 0)
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any], "\(printed)")
        print("home assistant: \(printed)")
        #expect(report["started"] as? Bool == true, "\(report)")
        let entities = report["entities"] as? [String: String] ?? [:]
        let expected = [
            "binary_sensor.sentry_porch_face", "binary_sensor.sentry_porch_armed", "sensor.sentry_porch_pan", "sensor.sentry_porch_tilt",
            "select.sentry_porch_mode", "switch.sentry_porch_expressions", "event.sentry_porch_event", "image.sentry_porch_face_picture",
            "sensor.sentry_porch_person",
        ]
        #expect(Set(entities.keys) == Set(expected), "\(entities)")
        #expect(entities["binary_sensor.sentry_porch_armed"] == "on", "\(entities)")
        let driven = report["driven"] as? [String: Any] ?? [:]
        #expect(driven["mode"] as? String == "scan" && driven["expressions"] as? String == "on", "\(driven)")
        let kinds = report["event_types"] as? [String] ?? []
        #expect(Set(kinds) == ["arrive", "lock", "lost", "shot", "expression"], "\(kinds)")
        #expect(kinds.first == "arrive", "the first arrival, published with the discovery, reached Home Assistant: \(kinds)")
        // Who it is (--known): on each lock, and in the person sensor while she is in view.
        let lockPeople = report["lock_people"] as? [String?] ?? []
        #expect(!lockPeople.isEmpty && lockPeople.allSatisfy { $0 == "eileen" }, "\(report["lock_people"] ?? "none")")
        #expect((report["person_states"] as? [String] ?? []).contains("eileen"), "\(report["person_states"] ?? "none")")
        // mqtt.md's example automation, its trigger and condition as the page has them, ran on the lock.
        #expect(report["doc_automation"] as? String == "on", "\(report["doc_automation"] ?? "no report")")
        #expect((report["problems"] as? [String] ?? []).isEmpty, "\(report["problems"] ?? [])")
    }
}
