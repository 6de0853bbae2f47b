/// `--serial ws://HOST[:PORT][/PATH][?token=…]`: a relay to send to.
public struct RelayURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    /// The request target: path and query, e.g. `/?token=abc`.
    public var target: String

    public static let scheme = "ws://"

    /// Parses `text`; the error says what is wrong and how to write it.
    public init(parsing text: String) throws(RelayURLError) {
        guard text.hasPrefix(Self.scheme) else {
            if text.hasPrefix("wss://") { throw RelayURLError("\(text): wss:// (TLS) is not supported; use ws:// on a trusted network, or an SSH tunnel") }
            throw RelayURLError("\(text): not a ws:// address; write ws://HOST:PORT, e.g. ws://pi.local:12354")
        }
        let rest = text.dropFirst(Self.scheme.count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard let hostPart = parts.first, !hostPart.isEmpty, parts.count <= 2 else {
            throw RelayURLError("\(text): no host; write ws://HOST:PORT, e.g. ws://pi.local:12354")
        }
        var port = RelayURL.defaultPort
        if parts.count == 2 {
            guard let value = Int(parts[1]), (1...65535).contains(value) else {
                throw RelayURLError("\(text): port \(parts[1]) is not between 1 and 65535")
            }
            port = UInt16(value)
        }
        host = String(hostPart)
        self.port = port
        self.target = target
    }

    /// The relay's default port, as in the original app.
    public static let defaultPort: UInt16 = 12354

    public var description: String { "ws://\(host):\(port)\(target)" }
}

public struct RelayURLError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
