import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import MQTT
import MQTTTopics
import Synchronization
import TextOutput

/// `sentry fleet`: the sentries on a broker, from what they keep retained there.
struct FleetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet", abstract: "List the sentries on an MQTT broker: online or not, mode, target and last event.")

    @OptionGroup var broker: BrokerFlags

    @Flag(help: "One JSON object: {\"sentries\": [{\"name\", \"online\", \"state\", \"lastEvent\"}]}.")
    var json = false

    @Option(help: "Seconds to gather the retained messages once connected.")
    var wait: Double = 1.5

    func validate() throws {
        guard wait.isFinite, (0.1...60).contains(wait) else { throw ValidationError("--wait \(wait) must be between 0.1 and 60 seconds") }
    }

    /// What the broker keeps for one sentry.
    struct Sentry: Encodable {
        var name: String
        var online: Bool?
        var state: PublishedState?
        var lastEvent: LastEvent?
    }

    struct LastEvent: Codable {
        var kind: String
        var id: String
        var unixTime: Double
        var expression: String?
    }

    func run() throws {
        var options = try broker.visit(as: "sentry-fleet")
        options.subscriptions = ["sentry/+/availability", "sentry/+/state", "sentry/+/last-event"]
        let found = Mutex<[String: Sentry]>([:])
        let client = try failingCleanly { [options] in try BrokerVisit.connect(options) { message in
            guard let name = SentryTopics.name(in: message.topic), !message.payload.isEmpty else { return }
            found.withLock { found in
                var sentry = found[name] ?? Sentry(name: name)
                let decoder = JSONDecoder()
                switch message.topic.split(separator: "/").last {
                case "availability": sentry.online = message.payload == Array("online".utf8)
                case "state": sentry.state = try? decoder.decode(PublishedState.self, from: Data(message.payload))
                default: sentry.lastEvent = try? decoder.decode(LastEvent.self, from: Data(message.payload))
                }
                found[name] = sentry
            }
        } }
        usleep(UInt32(wait * 1_000_000))
        client.stop()
        let sentries = found.withLock { $0 }.values.sorted { $0.name < $1.name }
        if json {
            struct Listing: Encodable { var sentries: [Sentry] }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(Listing(sentries: sentries)), as: UTF8.self))
            return
        }
        guard !sentries.isEmpty else { return print("no sentry on \(options.host):\(options.port) (none keeps a state there)") }
        // Every byte here came from the broker, where any of its users may have put it: text is
        // shown as one line and cut short, numbers only when they make sense.
        let rows = sentries.map { sentry -> [String] in
            let target = sentry.state?.target.flatMap { $0.count == 4 ? "\($0[2])x\($0[3])+\($0[0])+\($0[1])" : nil } ?? "-"
            let event = sentry.lastEvent.map { "\(Self.shown($0.kind))\($0.expression.map { " (\(Self.shown($0)))" } ?? "") \(Self.ago($0.unixTime))" } ?? "-"
            let armed = sentry.state.map { $0.armed.map { $0 ? "ARMED" : "no" } ?? "?" } ?? "-"
            return [sentry.name, sentry.online == true ? "online" : "offline", armed, sentry.state.map { Self.shown($0.mode) } ?? "-", target, event]
        }
        let header = ["NAME", "STATE", "ARMED", "MODE", "TARGET", "LAST EVENT"]
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            print(row.enumerated().map { $1 + String(repeating: " ", count: widths[$0] - $1.count) }.joined(separator: "  ").trimmingTrailingSpaces)
        }
    }

    /// Text from the broker as one line of at most 60 characters.
    static func shown(_ text: String) -> String {
        let line = text.oneLine
        return line.count <= 60 ? line : String(line.prefix(59)) + "…"
    }

    static func ago(_ unixTime: Double) -> String {
        let difference = Date().timeIntervalSince1970 - unixTime
        guard difference.isFinite, abs(difference) < 1e12 else { return "at an impossible time" }
        let seconds = Int(difference)
        switch seconds {
        case ..<120: return "\(max(0, seconds)) s ago"
        case ..<7200: return "\(seconds / 60) min ago"
        case ..<172_800: return "\(seconds / 3600) h ago"
        default: return "\(seconds / 86_400) days ago"
        }
    }
}

/// `sentry mqtt --forget NAME`: a sentry taken off Home Assistant and the broker.
struct MQTTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt", abstract: "Remove a sentry from Home Assistant and the broker's retained messages (--forget NAME).")

    @OptionGroup var broker: BrokerFlags

    @Option(help: ArgumentHelp("The sentry to forget, as --mqtt-name named it.", valueName: "name"))
    var forget: String

    func validate() throws {
        guard (try? SentryTopics(name: forget)) != nil else {
            throw ValidationError("--forget '\(forget)' is no sentry's name: names are 1 to 64 letters, digits, - or _ (sentry fleet lists them)")
        }
    }

    func run() throws {
        let topics = try SentryTopics(name: forget)
        let options = try broker.visit(as: "sentry-mqtt")
        let client = try failingCleanly { try BrokerVisit.connect(options) { _ in } }
        for message in HomeAssistantDiscovery(topics: topics, version: "").removals + topics.forgotten { client.publish(message) }
        let done = client.waitUntilAcknowledged(within: 10)
        client.stop()
        guard done else {
            return try failingCleanly { throw MQTTConnectionError("the broker did not acknowledge every removal within 10 s; run it again") }
        }
        print("forgot \(forget): Home Assistant's device and the retained state are gone (a sentry still running as \(forget) brings them back)")
    }
}

/// A short visit to the broker: connected within five seconds, or the reason in one line.
enum BrokerVisit {
    static func connect(_ options: MQTTClientOptions, received: @escaping @Sendable (MQTTMessage) -> Void) throws(MQTTConnectionError) -> MQTTClient {
        let errors = ErrorCatcher()
        let client = MQTTClient(options: options, logger: Logger(label: "sentry") { _ in errors }, received: received)
        let deadline = Date().addingTimeInterval(5)
        while !client.figures.connected, Date() < deadline, errors.first == nil { usleep(20_000) }
        guard client.figures.connected else {
            client.stop()
            // The client's line without its promise to try again: this visit ends here.
            let said = errors.first.map { $0.components(separatedBy: "; trying again").first ?? $0 }
            throw MQTTConnectionError(said ?? "mqtt: broker \(options.host):\(options.port): no connection within 5 s")
        }
        return client
    }

    /// Keeps the first error the client logs, to say it as the command's own.
    final class ErrorCatcher: LogHandler, @unchecked Sendable {
        private let lock = Mutex<String?>(nil)
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .error
        var first: String? { lock.withLock { $0 } }
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lock.withLock { if $0 == nil { $0 = "\(event.message)" } }
        }
    }
}

extension String {
    func replacingPrefix(_ prefix: String, with other: String) -> String { hasPrefix(prefix) ? other + dropFirst(prefix.count) : self }

    var trimmingTrailingSpaces: String { String(self[..<(lastIndex { $0 != " " }.map { index(after: $0) } ?? startIndex)]) }

}
