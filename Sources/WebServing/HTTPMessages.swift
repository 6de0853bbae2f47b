/// An HTTP status: its code and the reason phrase sent with it.
public struct HTTPStatus: Equatable, Sendable {
    public let code: Int
    public let reason: String

    public init(_ code: Int, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public static let switchingProtocols = HTTPStatus(101, "Switching Protocols")
    public static let ok = HTTPStatus(200, "OK")
    public static let accepted = HTTPStatus(202, "Accepted")
    public static let seeOther = HTTPStatus(303, "See Other")
    public static let badRequest = HTTPStatus(400, "Bad Request")
    public static let unauthorized = HTTPStatus(401, "Unauthorized")
    public static let forbidden = HTTPStatus(403, "Forbidden")
    public static let notFound = HTTPStatus(404, "Not Found")
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    public static let lengthRequired = HTTPStatus(411, "Length Required")
    public static let payloadTooLarge = HTTPStatus(413, "Content Too Large")
    public static let uriTooLong = HTTPStatus(414, "URI Too Long")
    public static let unsupportedMediaType = HTTPStatus(415, "Unsupported Media Type")
    public static let upgradeRequired = HTTPStatus(426, "Upgrade Required")
    public static let headersTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(500, "Internal Server Error")
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    public static let versionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")
}

/// Header fields in their order; names compare without ASCII case (RFC 9110 §5.1),
/// and only ASCII's: the parser lets nothing but tokens be a name.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, String)...) { fields = elements.map { (name: $0.0, value: $0.1) } }

    /// The first value of `name`; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get { fields.first { HTTPBytes.equalIgnoringASCIICase($0.name, name) }?.value }
        set {
            fields.removeAll { HTTPBytes.equalIgnoringASCIICase($0.name, name) }
            if let newValue { fields.append((name, newValue)) }
        }
    }

    /// Adds a field after the others (a second field of a name keeps the first).
    public mutating func append(name: String, value: String) { fields.append((name, value)) }

    mutating func append(_ field: (name: String, value: String)) { fields.append(field) }

    /// `name`'s value made `value`, in place of every field of that name.
    mutating func replace(_ name: String, with value: String) {
        fields.removeAll { HTTPBytes.equalIgnoringASCIICase($0.name, name) }
        fields.append((name, value))
    }

    /// How many fields carry `name`.
    public func count(of name: String) -> Int { fields.count { HTTPBytes.equalIgnoringASCIICase($0.name, name) } }

    /// True when `name`'s value is a comma-separated list with `token` in it, in any ASCII case (`Connection: keep-alive, Upgrade`).
    public func list(_ name: String, contains token: String) -> Bool {
        fields.contains { HTTPBytes.equalIgnoringASCIICase($0.name, name) && HTTPBytes.listItems($0.value).contains { HTTPBytes.equalIgnoringASCIICase($0, token) } }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.map(\.name) == rhs.fields.map(\.name) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }
}

/// The two versions of HTTP/1 a server of sentry's speaks.
public enum HTTPVersion: Sendable, Equatable {
    case http1_0, http1_1
}

/// A request as a server of sentry's reads it: the head parsed, the body read whole
/// (bounded by the server's limits before any of it is read).
public struct HTTPRequest: Sendable {
    public struct QueryItem: Equatable, Sendable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var method: String
    /// The target's path, without its query.
    public var path: String
    /// The query's items, percent-decoded.
    public var query: [QueryItem]
    public var headers: HTTPHeaders
    /// Exactly the `Content-Length` bytes that followed the head (none without it).
    public var body: [UInt8]
    public var version: HTTPVersion
    /// The peer's address, for log lines.
    public var peer: String
    /// Set by the server when the request is a WebSocket handshake that holds to RFC 6455
    /// (checked before any handler sees it): only then may a handler answer `.webSocket`.
    public internal(set) var isWebSocketHandshake = false

    public init(
        method: String, path: String, query: [QueryItem] = [], headers: HTTPHeaders = [:], body: [UInt8] = [], version: HTTPVersion = .http1_1,
        peer: String = "unknown peer"
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.version = version
        self.peer = peer
    }
}

/// What a handler answers: a status, headers, and a body that is bytes, a
/// stream that goes on while the client reads, or a WebSocket session.
public struct HTTPResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        /// Made on the connection's thread, which then writes what it yields until it ends.
        case stream(@Sendable () -> any ResponseStream)
        /// After the `101` answer, the connection belongs to the session.
        case webSocket(any WebSocketSession)
    }

    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: Body

    public init(status: HTTPStatus, headers: HTTPHeaders = [:], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// One line of plain text (a refusal says what and how to fix it).
    public static func text(_ status: HTTPStatus, _ line: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(Array((line + "\n").utf8)))
    }

    /// The bytes of a `.bytes` body (empty for the others): for tests and logs.
    public var bodyBytes: [UInt8] {
        if case .bytes(let bytes) = body { return bytes }
        return []
    }
}

/// A body written as it is made: `next` blocks until there is more and
/// returns `nil` when the stream ends (the connection then closes).
public protocol ResponseStream {
    mutating func next() -> [UInt8]?
}

/// Answers requests: called on the connection's own thread, so it may block
/// (never on the frame loop's).
public protocol HTTPHandler: Sendable {
    func respond(to request: HTTPRequest) -> HTTPResponse
}
