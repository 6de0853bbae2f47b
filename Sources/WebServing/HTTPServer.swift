#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import Dispatch
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
    /// A WebSocket with no frame for this long is closed.
    public var webSocketIdleSeconds = 3600.0
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

    /// `name` names the threads (`sentry-web`, `sentry-relay`).
    public init(address: ListenAddress, limits: ServerLimits, name: String, handler: any HTTPHandler) {
        self.address = address
        self.limits = limits
        self.name = name
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
        let (listening, connections) = state.withLock { state -> (Int32, Set<Int32>) in
            state.stopping = true
            defer { state.listening = -1 }
            return (state.listening, state.connections)
        }
        guard listening >= 0 else { return }
        // shutdown wakes a thread blocked on the socket; each thread closes its own.
        shutdown(listening, Int32(SHUT_RDWR))
        for descriptor in connections { shutdown(descriptor, Int32(SHUT_RDWR)) }
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
            let descriptor = withUnsafeMutablePointer(to: &peerAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(listening, $0, &length)
                }
            }
            if descriptor >= 0 {
                // (Glibc's module leaves out accept4.) Non-blocking: every wait is a poll with a deadline.
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            }
            if state.withLock({ $0.stopping }) {
                if descriptor >= 0 { close(descriptor) }
                return
            }
            guard descriptor >= 0 else {
                // Out of descriptors (EMFILE) or a connection reset before it was taken: try again shortly.
                if errno != EINTR { usleep(10_000) }
                continue
            }
            let admitted = state.withLock { state -> Bool in
                guard state.connections.count < limits.maximumClients else {
                    state.figures.busy += 1
                    return false
                }
                state.connections.insert(descriptor)
                state.figures.open = state.connections.count
                state.figures.peak = max(state.figures.peak, state.figures.open)
                return true
            }
            let connection = SocketConnection(descriptor: descriptor)
            guard admitted else {
                // Answered without a thread: one write into an empty socket buffer does not block.
                let line = "\(limits.maximumClients) clients are connected, the most this server takes at once; try again later, or raise \(limits.clientsFlag)"
                _ = try? connection.write(Self.head(of: .text(.serviceUnavailable, line)) + Array((line + "\n").utf8), until: monotonicSeconds())
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
        let request: HTTPRequest
        do {
            request = try read(from: connection, peer: peer)
        } catch let refusal as HTTPRefusal {
            state.withLock { $0.figures.refused += 1 }
            let response = HTTPResponse.text(refusal.status, refusal.message)
            try? connection.write(Self.head(of: response) + response.bodyBytes, until: monotonicSeconds() + limits.writeSeconds)
            return
        } catch {
            return
        }
        let response = handler.respond(to: request)
        state.withLock { $0.figures.served += 1 }
        do {
            switch response.body {
            case .bytes(let bytes):
                try connection.write(Self.head(of: response) + bytes, until: monotonicSeconds() + limits.writeSeconds)
            case .stream(let makeStream):
                try connection.write(Self.head(of: response), until: monotonicSeconds() + limits.writeSeconds)
                var stream = makeStream()
                // Chunked (RFC 9112 §7.1): each piece as it is made, then the empty chunk that ends the body.
                while let piece = stream.next(), !piece.isEmpty {
                    let framed = Array("\(String(piece.count, radix: 16))\r\n".utf8) + piece + [0x0D, 0x0A]
                    try connection.write(framed, until: monotonicSeconds() + limits.writeSeconds)
                }
                try connection.write(Array("0\r\n\r\n".utf8), until: monotonicSeconds() + limits.writeSeconds)
            case .webSocket(let session):
                guard let accept = WebSocketConnection.acceptValue(for: request) else {
                    let refusal = HTTPResponse.text(
                        .badRequest, "a WebSocket upgrade needs Upgrade: websocket, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key")
                    try connection.write(Self.head(of: refusal) + refusal.bodyBytes, until: monotonicSeconds() + limits.writeSeconds)
                    return
                }
                var switching = HTTPResponse(status: .switchingProtocols, headers: response.headers)
                switching.headers["Upgrade"] = "websocket"
                switching.headers["Sec-WebSocket-Accept"] = accept
                try connection.write(Self.head(of: switching, upgrading: true), until: monotonicSeconds() + limits.writeSeconds)
                session.run(WebSocketConnection(connection, leftover: request.body, limits: limits))
            }
        } catch {
            // The client left or stopped reading: its thread ends here.
        }
    }

    /// The request: its head within `maximumHeadBytes`, then its body within
    /// `maximumBodyBytes`, each within `requestSeconds`; refused as soon as a limit is crossed.
    private func read(from connection: SocketConnection, peer: String) throws -> HTTPRequest {
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
        var body = Array(bytes[headEnd...])
        deadline = monotonicSeconds() + limits.requestSeconds
        while body.count < bodyLength {
            do {
                body += try connection.read(upTo: min(bodyLength - body.count, 16384), until: deadline)
            } catch .timedOut {
                throw HTTPRefusal(.requestTimeout, "the body did not arrive within \(Int(limits.requestSeconds)) s")
            }
        }
        // What follows a body (a WebSocket's first frames) goes with it; a handler reads only the body.
        if request.headers["Upgrade"] == nil { body = Array(body.prefix(bodyLength)) }
        request.body = body
        return request
    }

    /// The status line and the header fields; one request per connection, so `Connection: close`
    /// (`Upgrade` for a WebSocket) and, for a body of bytes, its length.
    static func head(of response: HTTPResponse, upgrading: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(response.status.code) \(response.status.reason)\r\n"
        for field in response.headers { text += "\(field.name): \(field.value)\r\n" }
        text += upgrading ? "Connection: Upgrade\r\n" : "Connection: close\r\n"
        switch response.body {
        case .bytes(let bytes): text += "Content-Length: \(bytes.count)\r\n"
        case .stream: text += "Transfer-Encoding: chunked\r\n"
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
