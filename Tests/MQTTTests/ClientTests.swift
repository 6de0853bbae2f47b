import Foundation
import LogRecording
import Mosquitto
import MQTTTopics
import Synchronization
import Testing
import Waiting

@testable import MQTT

@Suite("The MQTT client against Debian's Mosquitto, started on a free port", .serialized)
struct ClientTests {
    static func options(_ broker: MosquittoBroker, password: String = MosquittoBroker.password) -> MQTTClientOptions {
        var options = MQTTClientOptions(host: "127.0.0.1", port: Int(broker.port), clientID: "sentry-test-\(UUID().uuidString.prefix(8))")
        options.username = MosquittoBroker.user
        options.password = Array(password.utf8)
        options.will = MQTTMessage(topic: "sentry/test/availability", text: "offline", qos: 1, retain: true)
        options.farewell = [MQTTMessage(topic: "sentry/test/availability", text: "offline", qos: 0, retain: true)]
        options.subscriptions = ["sentry/test/set", "sentry/all/set"]
        options.keepAlive = 5
        return options
    }

    @Test("it logs in, publishes states and QoS 1 events, takes what comes on its subscriptions, and says offline when it stops")
    func publishesAndReceives() throws {
        let broker = try MosquittoBroker()
        let log = LogRecorder()
        let got = Mutex<[MQTTMessage]>([])
        let client = MQTTClient(
            options: Self.options(broker), logger: log.logger,
            connected: { [MQTTMessage(topic: "sentry/test/availability", text: "online", retain: true)] }, received: { message in got.withLock { $0.append(message) } })
        #expect(eventually { client.figures.connected }, "\(log.messages.withLock { $0 })")
        client.publish(MQTTMessage(topic: "sentry/test/state", text: "{\"pan\":90}", retain: true))
        client.publish(MQTTMessage(topic: "sentry/test/event", text: "{\"kind\":\"lock\"}", qos: 1))
        #expect(broker.messages(on: "sentry/test/state", count: 1) == ["sentry/test/state {\"pan\":90}"])
        #expect(broker.messages(on: "sentry/test/availability", count: 1) == ["sentry/test/availability online"])
        broker.publish("sentry/all/set", "{\"offset\":30}")
        #expect(eventually { got.withLock { $0.contains { $0.topic == "sentry/all/set" && $0.payload == Array("{\"offset\":30}".utf8) } } })
        client.stop()
        #expect(broker.messages(on: "sentry/test/availability", count: 1) == ["sentry/test/availability offline"])
        #expect(client.figures.published >= 3 && client.figures.connections == 1)
    }

    @Test("a wrong password: one line that says so, attempts again with backoff, nothing else breaks")
    func wrongPassword() throws {
        let broker = try MosquittoBroker()
        let log = LogRecorder()
        let client = MQTTClient(options: Self.options(broker, password: "wrong"), logger: log.logger) { _ in }
        defer { client.stop() }
        client.publish(MQTTMessage(topic: "sentry/test/state", text: "{}"))
        // Attempts at 0, 1, 3 s: three refusals, said once.
        #expect(eventually(within: 8) { broker.log.components(separatedBy: "not authorised").count > 3 }, "\(broker.log)")
        let lines = log.messages.withLock { $0 }.filter { $0.contains("mqtt:") }
        #expect(lines.count == 1 && lines[0].contains("did not authorise this user; check the user in --mqtt, the password"), "\(lines)")
        #expect(!client.figures.connected)
    }

    @Test("the broker killed (-9) and restarted: the client comes back, sends its states again and the QoS 1 events from the gap")
    func brokerRestart() throws {
        let broker = try MosquittoBroker()
        let log = LogRecorder()
        let client = MQTTClient(
            options: Self.options(broker), logger: log.logger,
            connected: { [MQTTMessage(topic: "sentry/test/availability", text: "online", retain: true)] }) { _ in }
        defer { client.stop() }
        #expect(eventually { client.figures.connected })
        client.publish(MQTTMessage(topic: "sentry/test/state", text: "{\"pan\":80}", retain: true))
        #expect(broker.messages(on: "sentry/test/state", count: 1) == ["sentry/test/state {\"pan\":80}"])
        broker.kill()
        for index in 0..<5 { client.publish(MQTTMessage(topic: "sentry/test/event", text: "gap \(index)", qos: 1)) }
        try broker.start()
        // No persistence: the restarted broker knows nothing; the client brings its states and the gap's events.
        let events = try broker.subscriber("sentry/test/event")
        #expect(eventually(within: 20) { client.figures.connections == 2 }, "\(log.messages.withLock { $0 })")
        #expect(broker.messages(on: "sentry/test/state", count: 1) == ["sentry/test/state {\"pan\":80}"])
        #expect(broker.messages(on: "sentry/test/availability", count: 1) == ["sentry/test/availability online"])
        #expect(eventually { events.received().count == 5 }, "\(events.received())")
        #expect(events.received() == (0..<5).map { "sentry/test/event gap \($0)" })
    }

    @Test("two refusals in quick succession are two answers: an error reply is not a state, whose newest alone is kept")
    func everyRefusalAnswered() throws {
        let broker = try MosquittoBroker()
        let client = MQTTClient(options: Self.options(broker), logger: LogRecorder().logger) { _ in }
        defer { client.stop() }
        #expect(eventually { client.figures.connected })
        let topics = try SentryTopics(name: "test")
        // Handed over while the broker is away, so neither has gone out before the other comes.
        broker.kill()
        client.publish(topics.error("--offset 99 must be between 0 and 89", answering: MQTTMessage(topic: topics.set, text: "{\"offset\": 99}")))
        client.publish(topics.error("action 'fire' is not one of point, nudge, auto, scan, center", answering: MQTTMessage(topic: topics.command, text: "fire")))
        try broker.start()
        let errors = try broker.subscriber(topics.error)
        #expect(eventually(within: 20) { errors.received().count == 2 }, "\(errors.received())")
        #expect(errors.received().first?.contains("--offset 99") == true, "\(errors.received())")
    }

    @Test("a broker away for long: the events queue stays bounded, the oldest dropped and said once")
    func boundedQueue() throws {
        let log = LogRecorder()
        var options = MQTTClientOptions(host: "127.0.0.1", port: Int(MosquittoBroker.freePort()), clientID: "sentry-away")
        options.queueLimit = 10
        let client = MQTTClient(options: options, logger: log.logger) { _ in }
        defer { client.stop() }
        for index in 0..<50 { client.publish(MQTTMessage(topic: "sentry/test/event", text: "\(index)", qos: 1)) }
        #expect(client.figures.dropped == 40)
        let warnings = log.messages.withLock { $0 }.filter { $0.contains("the oldest are dropped") }
        #expect(warnings.count == 1, "\(warnings)")
    }
}

/// A broker that misbehaves, played by Python: each way a one-line reason and another attempt, never a crash.
@Suite("The MQTT client against a hostile broker", .serialized)
struct HostileBrokerTests {
    static let script = """
        import socket, sys
        mode = sys.argv[1]
        server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(8)
        print(server.getsockname()[1], flush=True)
        held = []
        while True:
            connection, _ = server.accept()
            connection.recv(1024)
            print("connect", flush=True)
            if mode == "garbage": connection.sendall(b"HTTP/1.1 400 Bad Request\\r\\n\\r\\n")
            elif mode == "huge": connection.sendall(bytes([0x20, 2, 0, 0, 0x30, 0xFF, 0xFF, 0xFF, 0x7F]) + b"x" * 100)
            elif mode.startswith("refuse"): connection.sendall(bytes([0x20, 2, 0, int(mode[6:])]))
            elif mode == "silent":
                held.append(connection)
                continue
            elif mode == "stranger": connection.sendall(bytes([0x20, 2, 0, 0, 0x30, 9, 0, 4]) + b"else" + b"boo")
            # Open until the client hangs up, so that it reads all of the answer first.
            try:
                while connection.recv(1024): pass
            except OSError: pass
            connection.close()
        """

    /// Runs the client against the broker played in `mode` until it has tried
    /// twice (its second CONNECT reached the broker) or `within` seconds pass.
    static func attempt(_ mode: String, connectTimeout: Double = 10, within seconds: Double = 10) throws -> (lines: [String], attempts: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", script, mode]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let reading = output.fileHandleForReading
        var text = ""
        while !text.contains("\n") { text += String(decoding: reading.availableData, as: UTF8.self) }
        let port = Int(text.split(separator: "\n")[0])!
        let log = LogRecorder()
        var options = MQTTClientOptions(host: "127.0.0.1", port: port, clientID: "sentry-hostile")
        options.subscriptions = ["sentry/test/set"]
        options.connectTimeout = connectTimeout
        let client = MQTTClient(options: options, logger: log.logger) { _ in }
        // The broker prints a line per CONNECT it reads: a second one means the first attempt ended and was logged.
        let source = DispatchSource.makeReadSource(fileDescriptor: reading.fileDescriptor)
        let printed = Mutex(text)
        source.setEventHandler { printed.withLock { $0 += String(decoding: reading.availableData, as: UTF8.self) } }
        source.resume()
        func attempts() -> Int { printed.withLock { $0.components(separatedBy: "connect").count - 1 } }
        _ = eventually(within: seconds) { attempts() >= 2 }
        client.stop()
        source.cancel()
        return (log.messages.withLock { $0 }.filter { $0.hasPrefix("error: mqtt:") }, attempts())
    }

    @Test(
        "garbage, a 256 MB length, each CONNACK refusal, a PUBLISH on a topic never subscribed to: one line each and another attempt",
        arguments: [
            ("garbage", "not MQTT: it answered CONNECT with a byte 72"), ("huge", "over the 65536 taken"), ("refuse1", "does not speak MQTT 3.1.1"), ("refuse2", "rejected the client id"),
            ("refuse3", "unavailable for now"), ("refuse4", "user name or password is wrong"), ("refuse5", "did not authorise this user"),
            ("stranger", "on else, which sentry did not subscribe to"),
        ])
    func refusals(mode: String, says: String) throws {
        let (lines, attempts) = try Self.attempt(mode)
        #expect(lines.count == 1 && lines[0].contains(says) && lines[0].contains("trying again in 1 s"), "\(lines)")
        #expect(attempts >= 2, "\(attempts) attempts")
    }

    @Test("a broker that accepts the connection and never answers: given up on after the connect timeout (10 s, here 0.5), said in one line, and tried again")
    func silent() throws {
        let (lines, attempts) = try Self.attempt("silent", connectTimeout: 0.5)
        #expect(lines.count == 1 && lines[0].contains("no CONNACK within 0.5 s"), "\(lines)")
        #expect(attempts >= 2, "\(attempts) attempts")
    }
}
