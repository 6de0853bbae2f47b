/// `--mqtt mqtt://[USER@]HOST[:PORT]`: the broker, and the user sentry logs
/// in as. The password never comes in it (it would show in the process
/// list): `--mqtt-password-file` or `SENTRY_MQTT_PASSWORD`.
public struct BrokerAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String?

    public static let defaultPort = 1883

    public init(host: String, port: Int = BrokerAddress.defaultPort, username: String? = nil) {
        (self.host, self.port, self.username) = (host, port, username)
    }

    /// Reads `text`, or says in one line what is wrong and what to write.
    public init(parsing text: String) throws(MQTTConnectionError) {
        let example = "e.g. --mqtt mqtt://sentry@192.168.1.10:1883"
        if text.hasPrefix("mqtts://") {
            throw MQTTConnectionError(
                "--mqtt \(text): TLS (mqtts://) is not built in; use mqtt:// on a trusted network, or a TLS tunnel to the broker (stunnel, or Mosquitto's own listener on the same host)")
        }
        guard text.hasPrefix("mqtt://") else { throw MQTTConnectionError("--mqtt \(text) must start with mqtt://, \(example)") }
        var rest = Substring(text.dropFirst("mqtt://".count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var username: String?
        if let at = rest.lastIndex(of: "@") {
            let user = rest[..<at]
            guard !user.isEmpty, !user.contains(":") else {
                throw MQTTConnectionError(
                    "--mqtt \(text): give the user alone before @ (the password goes in --mqtt-password-file or SENTRY_MQTT_PASSWORD, never on the command line)")
            }
            // §1.5.3: a string's length is two bytes.
            guard user.utf8.count <= 65_535 else { throw MQTTConnectionError("--mqtt: the user name is \(user.utf8.count) bytes; MQTT takes at most 65535") }
            username = String(user)
            rest = rest[rest.index(after: at)...]
        }
        var host = rest, port = Self.defaultPort
        if rest.hasPrefix("[") {
            // An IPv6 literal: [::1]:1883.
            guard let close = rest.firstIndex(of: "]") else { throw MQTTConnectionError("--mqtt \(text): an IPv6 address needs its closing ], \(example)") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw MQTTConnectionError("--mqtt \(text): only a port may follow the address, \(example)") }
                port = try Self.port(rest.dropFirst(), in: text)
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            port = try Self.port(rest[rest.index(after: colon)...], in: text)
        }
        guard !host.isEmpty, !host.contains("/"), host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw MQTTConnectionError("--mqtt \(text) names no host, \(example)")
        }
        self.init(host: String(host), port: port, username: username)
    }

    private static func port(_ text: Substring, in whole: String) throws(MQTTConnectionError) -> Int {
        guard let port = Int(text), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), (1...65_535).contains(port) else {
            throw MQTTConnectionError("--mqtt \(whole): the port '\(text)' must be a number from 1 to 65535 (1883 is MQTT's)")
        }
        return port
    }

    public var description: String {
        let host = host.contains(":") ? "[\(host)]" : host
        return "mqtt://\(username.map { "\($0)@" } ?? "")\(host):\(port)"
    }
}
