/// `[HOST:]PORT` for a server sentry runs (the relay, the web console):
/// an IPv4 host, 127.0.0.1 unless given.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    /// Parses `text`; `nil` unless it is `PORT` or `IPV4:PORT` with a port of 0 to
    /// 65535. Port 0 asks the system for a free one, which the server then says
    /// (a test, or a second instance, never guesses one that is taken meanwhile).
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let portText = parts.last, let port = UInt16(portText) else { return nil }
        let host = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard octets.count == 4 else { return nil }
        self.host = host
        self.port = port
    }

    /// Only this machine can reach it.
    public var isLoopback: Bool { host.hasPrefix("127.") }

    public var description: String { "\(host):\(port)" }

    /// The names of the flags that say where a server listens and who may use it.
    public struct Flags: Sendable {
        public var address: String
        public var token: String
        public var insecure: String
        /// Shown after "e.g." when the address does not parse.
        public var example: String

        public init(address: String, token: String, insecure: String, example: String) {
            self.address = address
            self.token = token
            self.insecure = insecure
            self.example = example
        }
    }

    /// `text` as given to `flags.address`, with the rule every network face
    /// of sentry keeps: loopback unless a token (or an explicit waiver) comes
    /// with it. Throws the one-line message naming the flags.
    public static func checked(_ text: String, token: String?, insecure: Bool, flags: Flags) throws(ServerError) -> ListenAddress {
        guard let address = ListenAddress(parsing: text) else {
            throw ServerError("\(flags.address) \(text) must be [HOST:]PORT with an IPv4 HOST and a PORT of 0 to 65535 (0: any free one), e.g. \(flags.example)")
        }
        if let token, token.isEmpty {
            throw ServerError("\(flags.token) needs a value, e.g. \(flags.token) \"$(openssl rand -hex 16)\"")
        }
        if !address.isLoopback, token == nil, !insecure {
            throw ServerError(
                "\(flags.address) \(text) is reachable from the network: give \(flags.token) TOKEN (or \(flags.insecure) to let anyone aim the turret)")
        }
        return address
    }
}

/// The shared secret of a server reachable from the network: every request
/// carries it as `?token=`, `Authorization: Bearer`, or (the console's page) the
/// cookie `cookieName`, which the page's first visit with `?token=` sets, so that
/// the page's own requests never put the token in a URL (logs, `Referer`).
public struct AccessToken: Sendable {
    public let value: String?
    /// Named after the port: cookies are per host, and two servers on one host must not share one.
    public let cookieName: String

    public init(_ value: String?, cookieName: String = "sentry_token") {
        self.value = value
        self.cookieName = cookieName
    }

    /// True when `request` carries the token (or none is needed). Compared as bytes (never
    /// as Unicode text, where two spellings of one letter are equal) and in constant time.
    public func admits(_ request: HTTPRequest) -> Bool {
        guard let value else { return true }
        var given = request.query.filter { $0.name.utf8.elementsEqual("token".utf8) }.map(\.value)
        if let authorization = request.headers["Authorization"], authorization.utf8.starts(with: "Bearer ".utf8) {
            given.append(String(authorization.dropFirst(7)))
        }
        if let cookie = cookie(in: request) { given.append(cookie) }
        // Every candidate is compared whole, so the time taken says nothing of which one was close.
        return given.reduce(false) { Self.constantTimeEqual(Array($1.utf8), Array(value.utf8)) || $0 }
    }

    /// Equal bytes, in a time that depends only on the lengths.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The value of this token's cookie in `request`, if it sends one.
    func cookie(in request: HTTPRequest) -> String? {
        for pair in (request.headers["Cookie"] ?? "").utf8.split(separator: 0x3B) {
            let parts = pair.split(separator: 0x3D, maxSplits: 1)
            if parts.count == 2, parts[0].drop(while: { $0 == 0x20 }).elementsEqual(cookieName.utf8) {
                return RequestParsing.percentDecoded(Array(parts[1])[...])
            }
        }
        return nil
    }

    /// `Set-Cookie` for the page: sent back by this site's own requests only (`SameSite=Strict`:
    /// never with a request another site makes), unreadable by scripts (`HttpOnly`).
    public var setCookie: String? {
        value.map { "\(cookieName)=\(RequestParsing.percentEncoded($0)); Path=/; HttpOnly; SameSite=Strict" }
    }
}

/// Every request the site rules let through passes here: without the token (when
/// one is set) it gets `refusal` (a 401 also says `WWW-Authenticate: Bearer`, RFC 9110 §11.6.1),
/// logged with the peer's address, and goes no further; with it, `next` answers.
public struct TokenGate: HTTPHandler {
    public let token: AccessToken
    public let refusal: HTTPResponse
    public let next: any HTTPHandler
    private let log: RefusalLog?

    public init(_ token: AccessToken, refusal: HTTPResponse, log: RefusalLog? = nil, next: some HTTPHandler) {
        self.token = token
        var refusal = refusal
        if refusal.status == .unauthorized { refusal.headers["WWW-Authenticate"] = #"Bearer realm="sentry""# }
        self.refusal = refusal
        self.log = log
        self.next = next
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        guard token.admits(request) else {
            let given = request.query.contains { $0.name == "token" } || request.headers["Authorization"] != nil
            log?.note(kind: "token", peer: request.peer, message: "\(request.method) \(ClientText.escaped(request.path)): \(given ? "a wrong token" : "no token")")
            return refusal
        }
        return next.respond(to: request)
    }
}

/// Why a server could not start, in one line.
public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
