import TextOutput

/// Whom a server on this machine answers, against the user's own browser: loopback
/// is no boundary for a page in another tab (SPEC §7, network faces).
///
/// - DNS rebinding: a page whose name the attacker points at 127.0.0.1 sends its
///   own name as `Host`. Only names sentry answers to pass: `localhost`, IP
///   literals (how a board on the network is reached without a name; a rebinding
///   needs a name), and the names given with `--web-allow-host`/`--allow-host`.
/// - Cross-site requests and WebSockets: a browser sends `Origin` with every `POST`
///   and WebSocket upgrade; it must be the server's own (the console's page) or one
///   given with `--web-allow-origin`/`--allow-origin`. Without `Origin` the client is
///   no browser (the original app, curl, scripts) and passes.
/// - A `POST` body must be `application/json`: a browser cannot send that cross-site
///   without asking first (a preflight this server never grants), even one that
///   leaves `Origin` out.
public struct SiteRules: Sendable {
    /// Names besides `localhost` and IP literals, lowercased, without a port.
    public let allowedHosts: Set<String>
    /// Origins besides the server's own, lowercased (`http://pi.local:8080`).
    public let allowedOrigins: Set<String>

    /// Parses `--web-allow-host`/`--allow-host` and `--web-allow-origin`/`--allow-origin`
    /// values: comma-separated lists (a flag or a settings-file line each). An error
    /// names the value by `hostFlag` or `originFlag`, so the user sees the flag they typed.
    public init(
        allowedHosts: String?, allowedOrigins: String?, hostFlag: String = "allowed host", originFlag: String = "allowed origin"
    ) throws(ServerError) {
        func list(_ text: String?) -> [String] {
            (text ?? "").split(separator: ",").map { $0.trimmed() }.filter { !$0.isEmpty }
        }
        let hosts = list(allowedHosts), origins = list(allowedOrigins)
        if let bad = hosts.first(where: { $0.contains(":") || $0.contains("/") }) {
            throw ServerError("\(hostFlag) \(bad) must be a name without port or scheme, e.g. sentry.local")
        }
        if let bad = origins.first(where: { origin in
            let parts = origin.split(separator: "://", maxSplits: 1)
            return parts.count != 2 || !["http", "https"].contains(parts[0].lowercased()) || parts[1].isEmpty || parts[1].dropLast().contains("/")
        }) {
            throw ServerError("\(originFlag) \(bad) must be scheme://host[:port], e.g. http://sentry.local:8080")
        }
        self.init(allowedHosts: hosts, allowedOrigins: origins)
    }

    public init(allowedHosts: [String] = [], allowedOrigins: [String] = []) {
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
        self.allowedOrigins = Set(allowedOrigins.map { Self.trimmed($0.lowercased()) })
    }

    /// Why a request is refused, with what to answer.
    public enum Refusal: Equatable, Sendable {
        case foreignHost(String)
        case foreignOrigin(String)
        case notJSON(String)

        /// What the log counts it under.
        public var kind: String {
            switch self {
            case .foreignHost: "host"
            case .foreignOrigin: "origin"
            case .notJSON: "body"
            }
        }

        public var status: HTTPStatus {
            switch self {
            case .foreignHost, .foreignOrigin: .forbidden
            case .notJSON: .unsupportedMediaType
            }
        }

        /// One line: what was refused and how to allow it (what the client sent, escaped).
        public func message(hostFlag: String, originFlag: String) -> String {
            switch self {
            case .foreignHost(let host):
                let host = ClientText.escaped(host, limit: 80)
                return "host \(host) is not a name this server answers to (DNS rebinding); reach it by localhost or its IP address, "
                    + "or allow the name with \(hostFlag) \(host)"
            case .foreignOrigin(let origin):
                let origin = ClientText.escaped(origin, limit: 80)
                return "a request from the page at \(origin) is refused (cross-site); open the console itself, or allow that page with \(originFlag) \(origin)"
            case .notJSON(let type):
                return "a body of type \(type.isEmpty ? "(none)" : ClientText.escaped(type, limit: 80)) is refused; send JSON with Content-Type: application/json"
            }
        }
    }

    /// Nil when `request` may go on.
    public func refusal(for request: HTTPRequest) -> Refusal? {
        // ASCII case and byte comparison only: in Unicode, a Kelvin sign equals a K.
        let host = request.headers["Host"].map(HTTPBytes.lowercased)
        if let host, !admits(host: Self.name(inHost: host)) { return .foreignHost(Self.name(inHost: host)) }
        guard changesState(request) else { return nil }
        if let origin = request.headers["Origin"].map(HTTPBytes.lowercased) {
            let trimmed = Self.trimmed(origin)
            let sameOrigin = host.map { host in ["http://", "https://"].contains { ($0 + host).utf8.elementsEqual(trimmed.utf8) } } ?? false
            if !sameOrigin, !allowedOrigins.contains(where: { $0.utf8.elementsEqual(trimmed.utf8) }) { return .foreignOrigin(origin) }
        }
        if request.method == "POST", hasBody(request) {
            let type = request.headers["Content-Type"] ?? ""
            if !HTTPBytes.mediaType(of: type).utf8.elementsEqual("application/json".utf8) { return .notJSON(type) }
        }
        return nil
    }

    /// `localhost`, an IP literal, or a name allowed by flag.
    func admits(host name: String) -> Bool {
        name.utf8.elementsEqual("localhost".utf8) || Self.isIPLiteral(name) || allowedHosts.contains { $0.utf8.elementsEqual(name.utf8) }
    }

    /// A `POST` (or another method that is no read), or a WebSocket upgrade.
    private func changesState(_ request: HTTPRequest) -> Bool {
        if request.method != "GET" && request.method != "HEAD" { return true }
        return WebSocketHandshake.isAsked(by: request)
    }

    private func hasBody(_ request: HTTPRequest) -> Bool {
        if let length = request.headers["Content-Length"] { return Int(length) != 0 }
        return request.headers["Transfer-Encoding"] != nil || !request.body.isEmpty
    }

    /// The name in a `Host` value: without its port; an IPv6 literal keeps its brackets.
    static func name(inHost host: String) -> String {
        if host.hasPrefix("["), let end = host.firstIndex(of: "]") { return String(host[...end]) }
        if let colon = host.lastIndex(of: ":"), host[host.index(after: colon)...].allSatisfy(\.isNumber) { return String(host[..<colon]) }
        return host
    }

    /// `127.0.0.1`, `192.168.1.20`, `[::1]`: an address, not a name.
    static func isIPLiteral(_ name: String) -> Bool {
        if name.hasPrefix("["), name.hasSuffix("]") {
            let inside = name.dropFirst().dropLast()
            return !inside.isEmpty && inside.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { UInt8($0) != nil }
    }

    /// An origin without a trailing slash.
    private static func trimmed(_ origin: String) -> String { origin.hasSuffix("/") ? String(origin.dropLast()) : origin }
}

/// Every request passes here before anything else (before the token): refused by
/// `rules`, it gets its status and one line, logged at most once every 10 s per
/// kind with the peer's address and how many more were refused since.
public struct SiteGate: HTTPHandler {
    public let rules: SiteRules
    public let hostFlag: String, originFlag: String
    public let next: any HTTPHandler
    private let log: RefusalLog?

    public init(_ rules: SiteRules, hostFlag: String, originFlag: String, log: RefusalLog?, next: some HTTPHandler) {
        self.rules = rules
        self.hostFlag = hostFlag
        self.originFlag = originFlag
        self.log = log
        self.next = next
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        guard let refusal = rules.refusal(for: request) else { return next.respond(to: request) }
        let message = refusal.message(hostFlag: hostFlag, originFlag: originFlag)
        log?.note(kind: refusal.kind, peer: request.peer, message: "\(request.method) \(ClientText.escaped(request.path)): \(message)")
        return .text(refusal.status, message)
    }
}
