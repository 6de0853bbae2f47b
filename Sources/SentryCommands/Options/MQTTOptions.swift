import ArgumentParser
import FoundationEssentials
import Glibc
import MQTT
import MQTTTopics
import SentryApp

/// The broker and the password for it: `run`, `fleet` and `mqtt` take them alike.
struct BrokerFlags: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The MQTT broker, mqtt://[USER@]HOST[:PORT] (1883 unless given). The password comes from --mqtt-password-file or SENTRY_MQTT_PASSWORD, never from the command line.",
            valueName: "url"))
    var mqtt: String?

    @Option(help: ArgumentHelp("A file holding the broker password (its first line); SENTRY_MQTT_PASSWORD otherwise.", valueName: "path"), completion: .file())
    var mqttPasswordFile: String?

    func validate() throws {
        if let mqtt { _ = try Self.address(mqtt) }
        _ = try password()
    }

    static func address(_ text: String) throws -> BrokerAddress {
        do {
            return try BrokerAddress(parsing: text)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The password: the file's first line, else the environment's, else none.
    func password() throws -> [UInt8]? {
        if let mqttPasswordFile {
            guard let data = FileManager.default.contents(atPath: mqttPasswordFile) else {
                throw ValidationError("--mqtt-password-file \(mqttPasswordFile): cannot be read; give a file readable by this user that holds the password")
            }
            let line = Array(data.prefix { $0 != 0x0A && $0 != 0x0D })
            guard !line.isEmpty else { throw ValidationError("--mqtt-password-file \(mqttPasswordFile) is empty; put the password on its first line") }
            guard line.count <= 65_535 else { throw ValidationError("--mqtt-password-file \(mqttPasswordFile): its first line is \(line.count) bytes; MQTT takes a password of at most 65535") }
            return line
        }
        let password = ProcessInfo.processInfo.environment["SENTRY_MQTT_PASSWORD"].map { Array($0.utf8) }
        if let password, password.count > 65_535 { throw ValidationError("SENTRY_MQTT_PASSWORD is \(password.count) bytes; MQTT takes a password of at most 65535") }
        return password
    }

    /// Client options for a short visit to the broker (`fleet`, `mqtt`): `--mqtt`, else the settings file's `mqtt` (or `config`'s).
    func visit(as clientID: String, config: String? = nil) throws -> MQTTClientOptions {
        guard let url = mqtt ?? SettingsFile.configuredValue("mqtt", config: config) else {
            throw ValidationError("no broker: pass --mqtt mqtt://HOST, or set mqtt in the settings file")
        }
        let address = try Self.address(url)
        var options = MQTTClientOptions(host: address.host, port: address.port, clientID: "\(clientID)-\(getpid())")
        options.username = address.username
        options.password = try password()
        return options
    }
}

/// sentry on an MQTT broker (`run`): where, as whom, under which name.
struct MQTTOptions: ParsableArguments {
    @OptionGroup var broker: BrokerFlags

    @Option(help: ArgumentHelp("This sentry's name on the broker (topics under sentry/NAME/); the host's name by default.", valueName: "name"))
    var mqttName: String?

    func validate() throws {
        guard broker.mqtt != nil else {
            if mqttName != nil || broker.mqttPasswordFile != nil {
                throw ValidationError("--mqtt-name and --mqtt-password-file need --mqtt URL, e.g. --mqtt mqtt://192.168.1.10")
            }
            return
        }
        do {
            _ = try SentryTopics(name: name)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The name: `--mqtt-name`, else the host's name with what a topic level cannot hold made `-`.
    var name: String {
        if let mqttName { return mqttName }
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: ".").first.map(String.init) ?? "sentry"
        let cleaned = String(host.map { $0.isLetter && $0.isASCII || $0.isNumber && $0.isASCII || $0 == "-" || $0 == "_" ? $0 : "-" })
        return cleaned.isEmpty || cleaned == "all" ? "sentry" : cleaned
    }

    /// Host names that machines come with: two sentries on them would share one name by default.
    static let commonHostNames: Set<String> = ["raspberrypi", "raspberry", "pi", "localhost", "debian", "ubuntu", "dietpi", "orangepi", "rockpi", "sentry"]

    /// The settings; `nil` without `--mqtt`.
    func settings(version: String) throws -> MQTTSettings? {
        guard let mqtt = broker.mqtt else { return nil }
        do {
            var settings = MQTTSettings(broker: try BrokerAddress(parsing: mqtt), password: try broker.password(), topics: try SentryTopics(name: name), version: version)
            settings.clientID = Self.clientID(name: name)
            if mqttName == nil, Self.commonHostNames.contains(name.lowercased()) {
                settings.nameWarning =
                    "mqtt: the name '\(name)' is this machine's host name, which many machines share: two sentries of one name share their topics and Home Assistant's device; give each its own with --mqtt-name (or mqtt-name in the settings file)"
            }
            return settings
        } catch let error as MQTTConnectionError {
            throw ValidationError(error.description)
        }
    }

    /// `sentry-NAME-MACHINE-PID`: a broker drops a client when another connects with its id,
    /// so the id names this process on this machine (its /etc/machine-id), not only the name
    /// two machines may share.
    static func clientID(name: String) -> String {
        let machine = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8)).map { String($0.prefix(8)) } ?? ""
        return "sentry-\(name)-\(machine.isEmpty ? "host" : machine)-\(getpid())"
    }
}
