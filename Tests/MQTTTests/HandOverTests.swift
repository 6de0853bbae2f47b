import Foundation
import LogRecording
import ProcessThreads
import Synchronization
import Testing
import Waiting

@testable import MQTT

/// What the client owes the broker across connections that end badly:
/// played by a small broker in Python that ends each connection where a
/// real network would, on purpose.
@Suite("QoS 1 events across broken connections, and a stop while connecting")
struct HandOverTests {
    /// `handover`: the first connection takes three events without a PUBACK and closes; the
    /// second is reset right after its CONNACK (the client's SUBSCRIBE write fails); the rest
    /// acknowledge everything and print each PUBLISH as `got TOPIC PAYLOAD`.
    /// `backlog`: a listening socket whose queue is full, so a connect is never answered.
    static let script = """
        import signal, socket, struct, sys
        mode = sys.argv[1]
        server = socket.socket(); server.bind(("127.0.0.1", 0))
        if mode == "backlog":
            server.listen(0)
            fillers = []
            for _ in range(4):
                filler = socket.socket(); filler.setblocking(False)
                try: filler.connect(server.getsockname())
                except BlockingIOError: pass
                fillers.append(filler)
            print(server.getsockname()[1], flush=True)
            signal.pause()
        server.listen(8)
        print(server.getsockname()[1], flush=True)

        def packets(connection):
            buffer = b""
            while True:
                data = connection.recv(65536)
                if not data: return
                buffer += data
                while len(buffer) >= 2:
                    length, shift, index = 0, 0, 1
                    while index < len(buffer) and buffer[index] & 0x80:
                        length |= (buffer[index] & 0x7F) << shift; shift += 7; index += 1
                    if index >= len(buffer): break
                    length |= buffer[index] << shift; index += 1
                    if len(buffer) < index + length: break
                    yield buffer[0], buffer[index:index + length]
                    buffer = buffer[index + length:]

        for number in range(1, 100):
            connection, _ = server.accept()
            print("connection", number, flush=True)
            unacknowledged = 0
            for kind, body in packets(connection):
                if kind >> 4 == 1:
                    connection.sendall(bytes([0x20, 2, 0, 0]))
                    if number == 2:
                        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        break
                elif kind >> 4 == 8:
                    connection.sendall(bytes([0x90, 3]) + body[:2] + bytes([1]))
                elif kind >> 4 == 3:
                    size = struct.unpack(">H", body[:2])[0]
                    topic, rest = body[2:2 + size].decode(), body[2 + size:]
                    if (kind >> 1) & 3:
                        packet_id, rest = rest[:2], rest[2:]
                        if number == 1:
                            print("unacknowledged", topic, rest.decode(), flush=True)
                            unacknowledged += topic == "event"
                            if unacknowledged == 3: break
                            continue
                        connection.sendall(bytes([0x40, 2]) + packet_id)
                    if number > 2: print("got", topic, rest.decode(), flush=True)
            connection.close()
        """

    /// The broker in `mode`, its port, and what it printed so far.
    final class ScriptedBroker {
        let process = Process()
        let port: Int
        private final class Printed: Sendable { let text = Mutex("") }
        private let printed = Printed()
        private let source: DispatchSourceRead

        init(_ mode: String) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-u", "-c", HandOverTests.script, mode]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let reading = output.fileHandleForReading
            var text = ""
            while !text.contains("\n") { text += String(decoding: reading.availableData, as: UTF8.self) }
            port = Int(text.split(separator: "\n")[0])!
            source = DispatchSource.makeReadSource(fileDescriptor: reading.fileDescriptor)
            source.setEventHandler { [printed] in printed.text.withLock { $0 += String(decoding: reading.availableData, as: UTF8.self) } }
            source.resume()
        }

        var lines: [String] { printed.text.withLock { $0 }.split(separator: "\n").map(String.init) }

        deinit {
            source.cancel()
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    @Test("a connection reset before its SUBSCRIBE is written: the events left unacknowledged reach the broker on the next, and online is sent once per connection")
    func eventsSurviveAFailedSubscribe() throws {
        let broker = try ScriptedBroker("handover")
        let log = LogRecorder()
        var options = MQTTClientOptions(host: "127.0.0.1", port: broker.port, clientID: "sentry-handover")
        options.subscriptions = ["sentry/test/set"]
        let client = MQTTClient(options: options, logger: log.logger, connected: { [MQTTMessage(topic: "online", text: "yes", qos: 1, retain: true)] }) { _ in }
        defer { client.stop() }
        for index in 1...3 { client.publish(MQTTMessage(topic: "event", text: "\(index)", qos: 1)) }
        #expect(eventually(within: 15) { broker.lines.filter { $0.hasPrefix("got event") }.count >= 3 }, "\(broker.lines) \(log.messages.withLock { $0 })")
        let lines = broker.lines
        #expect(lines.contains("connection 2") && lines.contains("connection 3"), "\(lines)")
        #expect(Set(lines.filter { $0.hasPrefix("got event") }) == ["got event 1", "got event 2", "got event 3"], "\(lines)")
        // Announcements are the connection's own: never carried over to be sent twice.
        #expect(lines.filter { $0 == "got online yes" }.count == 1, "\(lines)")
        #expect(client.waitUntilAcknowledged(within: 5))
    }

    @Test("stop() while the broker has not answered the TCP connect: the client's thread has ended when it returns (it was left in a 60 s connect)")
    func stopInterruptsTheConnect() throws {
        let broker = try ScriptedBroker("backlog")
        let log = LogRecorder()
        var options = MQTTClientOptions(host: "127.0.0.1", port: broker.port, clientID: "sentry-stuck")
        options.connectTimeout = 60
        let client = MQTTClient(options: options, logger: log.logger) { _ in }
        // The scenario: stop() comes while the client's thread waits in poll(2) for its
        // connect (non-blocking) to be answered, the only wait of a first attempt.
        let waiting = eventually { ProcessThreads.systemCalls(named: "sentry-mqtt").values.contains(ProcessThreads.pollCall) }
        #expect(waiting, "the client's thread never waited for its connect: \(ProcessThreads.systemCalls(named: "sentry-mqtt"))")
        client.stop()
        // Before, stop() gave up after its own bound (12 s) and left the thread in the 60 s connect.
        #expect(client.hasEnded)
        #expect(!client.figures.connected && client.figures.connections == 0)
    }
}
