#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import CSocketAccept
import Dispatch
import Logging
import MonotonicTime
import Synchronization
import Threading

/// What one server takes from its clients before it refuses them: each
/// connection costs a thread, a descriptor and its buffers, so their number,
/// their size and their time are all bounded, and a flood of clients, slow or
/// silent ones, or oversized requests cost bounded memory and never the frame loop.
public struct ServerLimits: Sendable {
    /// Connections served at once; more are answered `503` at once and closed.
    public var maximumClients: Int
    /// The flag that sets `maximumClients`, for the `503`'s line.
    public var clientsFlag: String
    /// The request line and header fields together.
    public var maximumHeadBytes = 16 * 1024
    /// A request body (the control API's JSON).
    public var maximumBodyBytes = 16 * 1024
    /// The whole head, and then the body, must arrive within this (slow-header clients).
    public var requestSeconds = 10.0
    /// A write that cannot go on for this long drops the client (a viewer that never reads).
    public var writeSeconds = 10.0
    /// Answers that go on (a video, an event feed, a WebSocket) held at once: two slots stay
    /// for short requests when there are more than two, so the page and the API still load
    /// while viewers fill the rest.
    public var maximumStreams: Int {
        get { streamLimit ?? (maximumClients > 2 ? maximumClients - 2 : maximumClients) }
        set { streamLimit = newValue }
    }
    private var streamLimit: Int?
    /// A WebSocket silent this long is pinged (a browser answers at once, by itself) ...
    public var webSocketPingSeconds = 30.0
    /// ... and one that sent nothing, not even the pong, for this long is closed.
    public var webSocketIdleSeconds = 75.0
    /// The largest WebSocket frame taken; a larger one is refused from its header.
    public var largestWebSocketFrame = 4096

    public init(maximumClients: Int = 8, clientsFlag: String) {
        self.maximumClients = maximumClients
        self.clientsFlag = clientsFlag
    }
}

/// An HTTP/1.1 server of sentry's own (RFC 9112, one request per connection)
/// with WebSocket upgrades (RFC 6455): a thread accepts, and each client is
/// served on a thread of its own, at most `limits.maximumClients` at once.
/// Handlers may block; nothing here runs on the frame loop's thread.
public final class HTTPServer: Sendable {
    public let address: ListenAddress
    public let limits: ServerLimits
    private let handler: any HTTPHandler
    private let name: String
    private let logger: Logger?
    private let state = Mutex(State())
    private let acceptorExited = DispatchSemaphore(value: 0)

    /// What a server has seen, for tests and load reports.
    public struct Figures: Sendable, Equatable {
        /// Connections being served now, and the most at once.
        public var open = 0, peak = 0
        /// Requests answered by a handler.
        public var served = 0
        /// Connections turned away for being over `maximumClients`.
        public var busy = 0
        /// Requests refused before a handler: malformed, too large, or too slow.
        public var refused = 0
        /// Streams and WebSockets going on now.
        public var streams = 0
    }

    private struct State {
        var listening: Int32 = -1
        var port: UInt16 = 0
        var stopping = false
        var connections: Set<Int32> = []
        var figures = Figures()
    }

    public var figures: Figures { state.withLock { $0.figures } }
    /// The port listened on once started: `address.port`, or the one the system chose for port 0.
    public var port: UInt16 { state.withLock { $0.port } }

    /// `name` names the threads (`sentry-web`, `sentry-relay`); `logger` hears, at debug level,
    /// of the connections that ended before their answer did (a client that left, a write that timed out).
    public init(address: ListenAddress, limits: ServerLimits, name: String, logger: Logger? = nil, handler: any HTTPHandler) {
        self.address = address
        self.limits = limits
        self.name = name
        self.logger = logger
        self.handler = handler
    }

    /// Listens and starts accepting; throws when the address cannot be had (a port in use).
    public func start() throws(ServerError) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw ServerError("cannot make a socket: \(Self.errorText())") }
        var yes: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = address.port.bigEndian
        guard inet_pton(AF_INET, address.host, &socketAddress.sin_addr) == 1 else {
            close(socket)
            throw ServerError("\(address.host) is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // The system's deepest queue (SOMAXCONN, capped by net.core.somaxconn): a burst of
        // connections waits there for the one accepting thread, which turns the excess away
        // with a 503. A short queue drops their SYNs instead, and those clients hear nothing for seconds.
        guard bound == 0, listen(socket, SOMAXCONN) == 0 else {
            let reason = Self.errorText()
            close(socket)
            throw ServerError(reason)
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        state.withLock {
            $0.listening = socket
            $0.port = UInt16(bigEndian: local.sin_port)
        }
        startThread(named: name) { [self] in acceptLoop(socket) }
    }

    /// Stops accepting, ends every connection, and waits (a second at most) for their threads. Idempotent.
    public func stop() {
        // Shut down under the lock: a descriptor in the set is still open (a connection's thread
        // leaves the set under the lock before it closes), so the number cannot be one the kernel
        // has given to something else meanwhile (the serial port). shutdown wakes a blocked thread;
        // each thread closes its own descriptor.
        let wasListening = state.withLock { state -> Bool in
            guard state.listening >= 0 else { return false }
            state.stopping = true
            shutdown(state.listening, Int32(SHUT_RDWR))
            for descriptor in state.connections { shutdown(descriptor, Int32(SHUT_RDWR)) }
            state.listening = -1
            return true
        }
        guard wasListening else { return }
        acceptorExited.wait()
        let deadline = monotonicSeconds() + 1
        while state.withLock({ !$0.connections.isEmpty }), monotonicSeconds() < deadline { usleep(5_000) }
    }

    private func acceptLoop(_ listening: Int32) {
        defer {
            close(listening)
            acceptorExited.signal()
        }
        while true {
            var peerAddress = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            // Non-blocking (every wait is a poll with a deadline) and close-on-exec from the start.
            let descriptor = withUnsafeMutablePointer(to: &peerAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sentry_accept_private(listening, $0, &length)
                }
            }
            let failure = errno
            guard descriptor >= 0 else {
                if state.withLock({ $0.stopping }) { return }
                // Out of descriptors (EMFILE) or a connection reset before it was taken: try again shortly.
                if failure == EMFILE || failure == ENFILE { logger?.warning("\(name): out of descriptors; new connections wait") }
                if failure != EINTR { usleep(10_000) }
                continue
            }
            // Stopping is checked where a connection is counted in, under the same lock: a connection
            // accepted while `stop` shut the others down is either shut down with them or never served.
            let admitted = state.withLock { state -> Bool? in
                guard !state.stopping else { return nil }
                guard state.connections.count < limits.maximumClients else {
                    state.figures.busy += 1
                    return false
                }
                state.connections.insert(descriptor)
                state.figures.open = state.connections.count
                state.figures.peak = max(state.figures.peak, state.figures.open)
                return true
            }
            guard let admitted else {
                close(descriptor)
                return
            }
            let connection = SocketConnection(descriptor: descriptor)
            guard admitted else {
                // Answered without a thread: one write into an empty socket buffer does not block.
                let line = "\(limits.maximumClients) clients are connected, the most this server takes at once; try again later, or raise \(limits.clientsFlag)"
                _ = try? connection.write(Self.head(of: .text(.serviceUnavailable, line), to: .http1_1) + Array((line + "\n").utf8), until: monotonicSeconds())
                shutdown(descriptor, Int32(SHUT_RDWR))
                close(descriptor)
                continue
            }
            let peer = Self.describe(peerAddress)
            startThread(named: name) { [self] in
                serve(connection, peer: peer)
                state.withLock { state in
                    state.connections.remove(descriptor)
                    state.figures.open = state.connections.count
                }
                connection.finish()
            }
        }
    }

    /// Reads one request, answers it, and (a WebSocket) hands the connection to its session.
    private func serve(_ connection: SocketConnection, peer: String) {
        let (request, leftover): (HTTPRequest, [UInt8])
        do {
            (request, leftover) = try read(from: connection, peer: peer)
        } catch let refusal as HTTPRefusal {
            state.withLock { $0.figures.refused += 1 }
            let response = refusal.response
            try? connection.write(Self.head(of: response, to: .http1_1) + response.bodyBytes, until: monotonicSeconds() + limits.writeSeconds)
            return
        } catch {
            logger?.debug("\(name): \(peer) left before its request was whole")
            return
        }
        // HEAD is answered as GET is, without the body (RFC 9110 §9.3.2).
        let headOnly = request.method == "HEAD"
        var asked = request
        if headOnly { asked.method = "GET" }
        var response = handler.respond(to: asked)
        state.withLock { $0.figures.served += 1 }
        if case .webSocket = response.body, !request.isWebSocketHandshake {
            response = WebSocketHandshake.needed
        }
        let goesOn: Bool
        switch response.body {
        case .bytes: goesOn = false
        case .stream, .webSocket: goesOn = !headOnly
        }
        let holdsSlot = goesOn && takeStreamSlot()
        if goesOn, !holdsSlot {
            let line = "\(limits.maximumStreams) videos, event feeds and WebSockets are open, the most this server keeps at once; close one, or raise \(limits.clientsFlag)"
            response = .text(.serviceUnavailable, line)
        }
        defer { if holdsSlot { state.withLock { $0.figures.streams -= 1 } } }
        do {
            try answer(response, to: request, on: connection, headOnly: headOnly, leftover: leftover)
        } catch {
            logger?.debug("\(name): \(peer) left, or stopped reading, before \(request.method) \(ClientText.escaped(request.path)) was answered")
        }
    }

    /// A stream slot, unless `maximumStreams` are taken.
    private func takeStreamSlot() -> Bool {
        state.withLock { state in
            guard state.figures.streams < limits.maximumStreams else { return false }
            state.figures.streams += 1
            return true
        }
    }

    /// Writes `response`: bytes with their length; a stream chunked to HTTP/1.1 and until the
    /// close to HTTP/1.0, which has no chunks (RFC 9112 §6.3); a WebSocket's `101`, then its session.
    private func answer(
        _ response: HTTPResponse, to request: HTTPRequest, on connection: SocketConnection, headOnly: Bool, leftover: [UInt8]
    ) throws(ConnectionEnd) {
        let head = Self.head(of: response, to: request.version)
        switch response.body {
        case .bytes(let bytes):
            try connection.write(head + (headOnly ? [] : bytes), until: monotonicSeconds() + limits.writeSeconds)
        case .stream(let makeStream):
            try connection.write(head, until: monotonicSeconds() + limits.writeSeconds)
            guard !headOnly else { return }
            let chunked = request.version == .http1_1
            var stream = makeStream()
            while let piece = stream.next(), !piece.isEmpty {
                let framed = chunked ? Array("\(String(piece.count, radix: 16))\r\n".utf8) + piece + [0x0D, 0x0A] : piece
                try connection.write(framed, until: monotonicSeconds() + limits.writeSeconds)
            }
            if chunked { try connection.write(Array("0\r\n\r\n".utf8), until: monotonicSeconds() + limits.writeSeconds) }
        case .webSocket(let session):
            var switching = HTTPResponse(status: .switchingProtocols, headers: response.headers)
            switching.headers["Upgrade"] = "websocket"
            switching.headers["Sec-WebSocket-Accept"] = WebSocketHandshake.acceptValue(for: request)
            try connection.write(Self.head(of: switching, to: .http1_1, upgrading: true), until: monotonicSeconds() + limits.writeSeconds)
            session.run(WebSocketConnection(connection, leftover: leftover, limits: limits))
        }
    }

    /// The request, and the bytes that came after its body (a WebSocket's first frames, kept
    /// for its session only): its head within `maximumHeadBytes`, then its body within
    /// `maximumBodyBytes`, each within `requestSeconds`; refused as soon as a limit is crossed.
    /// A WebSocket handshake is checked here, before any handler sees it.
    private func read(from connection: SocketConnection, peer: String) throws -> (HTTPRequest, leftover: [UInt8]) {
        var deadline = monotonicSeconds() + limits.requestSeconds
        let tooLarge = HTTPRefusal(.headersTooLarge, "the request head is over \(limits.maximumHeadBytes) bytes")
        var bytes: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            guard bytes.count <= limits.maximumHeadBytes else { throw tooLarge }
            let looked = bytes.count
            do {
                bytes += try connection.read(upTo: 4096, until: deadline)
            } catch .timedOut {
                throw HTTPRefusal(.requestTimeout, "the request head did not arrive within \(Int(limits.requestSeconds)) s")
            }
            headEnd = RequestParsing.endOfHead(in: bytes, from: looked)
        }
        guard let headEnd, headEnd <= limits.maximumHeadBytes else { throw tooLarge }
        var (request, bodyLength) = try RequestParsing.parse(head: bytes[..<headEnd], peer: peer)
        guard bodyLength <= limits.maximumBodyBytes else {
            throw HTTPRefusal(.payloadTooLarge, "the body is \(bodyLength) bytes; at most \(limits.maximumBodyBytes) are taken")
        }
        if WebSocketHandshake.isAsked(by: request) {
            try WebSocketHandshake.check(request)
            request.isWebSocketHandshake = true
        }
        var body = Array(bytes[headEnd...])
        deadline = monotonicSeconds() + limits.requestSeconds
        // A client that asked to hear first (curl with a larger body) gets its go-ahead now that the
        // head passed, rather than waiting its own timeout (RFC 9110 §10.1.1).
        if body.count < bodyLength, request.version == .http1_1, let expect = request.headers["Expect"],
            HTTPBytes.equalIgnoringASCIICase(expect, "100-continue")
        {
            try connection.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), until: deadline)
        }
        while body.count < bodyLength {
            do {
                body += try connection.read(upTo: min(bodyLength - body.count, 16384), until: deadline)
            } catch .timedOut {
                throw HTTPRefusal(.requestTimeout, "the body did not arrive within \(Int(limits.requestSeconds)) s")
            }
        }
        request.body = Array(body.prefix(bodyLength))
        return (request, request.isWebSocketHandshake ? Array(body.dropFirst(bodyLength)) : [])
    }

    /// The status line and the header fields; one request per connection, so `Connection: close`
    /// (`Upgrade` for a WebSocket) and, for a body of bytes, its length. Every answer says it may
    /// not be framed by another site's page (clickjacking) nor read as another type than it says.
    static func head(of response: HTTPResponse, to version: HTTPVersion, upgrading: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(response.status.code) \(response.status.reason)\r\n"
        for field in response.headers { text += "\(field.name): \(field.value)\r\n" }
        if response.headers["Content-Security-Policy"] == nil { text += "Content-Security-Policy: frame-ancestors 'none'\r\n" }
        text += "X-Frame-Options: DENY\r\nX-Content-Type-Options: nosniff\r\n"
        text += upgrading ? "Connection: Upgrade\r\n" : "Connection: close\r\n"
        switch response.body {
        case .bytes(let bytes): text += "Content-Length: \(bytes.count)\r\n"
        case .stream: if version == .http1_1 { text += "Transfer-Encoding: chunked\r\n" }
        case .webSocket: break
        }
        return Array((text + "\r\n").utf8)
    }

    static func describe(_ address: sockaddr_in) -> String {
        var address = address
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(INET_ADDRSTRLEN))
        return "\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)):\(UInt16(bigEndian: address.sin_port))"
    }

    static func errorText() -> String { String(cString: strerror(errno)).lowercased() }
}
