#if canImport(Glibc)
    import Glibc
#endif
import FoundationEssentials
import Logging
import MonotonicTime
import SystemPackage
import TurretProtocol
import WebSocketFrames
import TextOutput

/// `--serial ws://HOST:PORT`: commands to a remote `sentry relay` instead
/// of a local port, with the serial link's behaviour: never blocking the
/// frame loop (a non-blocking socket, newest aim wins while it is busy),
/// `reconnecting` when the relay or the network goes away, a new
/// connection every half second, and the aim sent again once it is back.
/// Each frame's commands go as one WebSocket text message (RFC 6455, masked
/// as a client must).
public final class WebSocketCommandOutput: CommandOutput {
    public let url: RelayURL
    private let logger: Logger
    private enum Phase {
        case closed, connecting
        case handshaking(key: String, reply: [UInt8])
        case open
    }
    private var phase = Phase.closed
    /// The connection's socket; nil while there is none.
    private var socket: FileDescriptor?
    private var queue = OutgoingQueue()
    /// A frame written in part: finished before anything else.
    private var unsent: [UInt8] = []
    private var incoming: [UInt8] = []
    private var reconnect = ReconnectSchedule()
    private var wasOpen = false
    public private(set) var bytesWritten = 0
    /// The relay's address, looked up again behind each reconnection, never on the frame thread.
    private let lookup: AddressLookup
    /// A relay's handshake reply is a few hundred bytes; a longer one is not a relay.
    static let largestHandshake = 8192
    /// The largest frame taken from a relay. The link only needs its close and
    /// ping frames (125 bytes at most) and ignores the rest; 4 KiB leaves room
    /// for a text frame a relay may one day send.
    public static let largestFrame = 4096

    /// Connects (waiting up to `timeout` seconds): a relay that cannot be
    /// reached at start is the user's to fix, so that is thrown.
    public init(url: RelayURL, timeout: Double = 3, logger: Logger) throws(LinkError) {
        self.url = url
        self.logger = logger
        lookup = AddressLookup(host: url.host)
        // At start, off the frame loop: the first lookup may wait.
        lookup.lookUpNow()
        let deadline = monotonicSeconds() + timeout
        var failure: String?
        while true {
            failure = step()
            if case .open = phase { return }
            if failure != nil || monotonicSeconds() >= deadline { break }
            waitForSocket(timeout: deadline - monotonicSeconds())
        }
        close()
        throw LinkError(
            .relayUnreachable, link: "relay \(url)", reason: failure ?? "no answer within \(Int(timeout)) s",
            hint: "start sentry relay there (sentry relay --listen HOST:PORT --serial …) or check the address and token")
    }

    public var state: LinkState {
        switch phase {
        case .open: queue.isEmpty && unsent.isEmpty ? .ok : .busy
        default: .reconnecting
        }
    }

    public func flush(timeout: Double) throws(LinkError) {
        let deadline = monotonicSeconds() + timeout
        service()
        while !(queue.isEmpty && unsent.isEmpty), case .open = phase, monotonicSeconds() < deadline {
            waitForSocket(timeout: deadline - monotonicSeconds())
            service()
        }
    }

    /// Closes the connection (with a close frame when it is open).
    public func close() {
        if case .open = phase, let socket {
            let frame = Self.frame(opcode: 0x8, payload: [0x03, 0xE8])
            _ = frame.withUnsafeBytes { Glibc.send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        closeSocket()
        phase = .closed
    }

    private func closeSocket() {
        try? socket?.close()
        socket = nil
    }

    /// Sleeps until the socket has what the connection waits for, or `timeout` seconds
    /// pass: connected (writable) while connecting; else a reply or a frame to read,
    /// and room to write while part of a frame is unsent.
    private func waitForSocket(timeout: Double) {
        guard let socket, timeout > 0 else { return }
        var events = Int16(POLLIN)
        if case .connecting = phase { events = Int16(POLLOUT) } else if !unsent.isEmpty { events |= Int16(POLLOUT) }
        var pollfd = Glibc.pollfd(fd: socket.rawValue, events: events, revents: 0)
        _ = poll(&pollfd, 1, Int32((timeout * 1000).rounded(.up)))
    }

    /// Queues `commands` and writes what the socket takes now, never blocking.
    public func send(_ commands: [Command]) throws(LinkError) {
        for command in commands { queue.enqueue(command) }
        service()
    }

    public func takeReconnected() -> Bool { reconnect.takeReconnected() }

    /// Moves the connection along without blocking: a new attempt every
    /// half second while it is down, then connect, handshake, open.
    private func service() {
        if case .closed = phase, !reconnect.attemptIsDue() { return }
        for _ in 0..<3 {
            let wasOpen: Bool = if case .open = phase { true } else { false }
            step()
            if wasOpen { break }
        }
    }

    /// One step of the connection's life; returns why it failed, if it did.
    @discardableResult
    private func step() -> String? {
        do {
            switch phase {
            case .closed:
                try startConnecting()
            case .connecting:
                try finishConnecting()
            case .handshaking(let key, let reply):
                try readHandshake(key: key, reply: reply)
            case .open:
                try readFrames()
                try writePending()
            }
            return nil
        } catch {
            let wasOpenNow: Bool = if case .open = phase { true } else { false }
            closeSocket()
            phase = .closed
            queue.removeAll()
            unsent = []
            if wasOpenNow { logger.warning("relay \(url): connection lost (\(error.reason)); reconnecting") }
            return error.reason
        }
    }

    private struct Failure: Error { let reason: String }

    private func startConnecting() throws(Failure) {
        guard let found = lookup.latest() else { throw Failure(reason: "host \(url.host) not found") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = url.port.bigEndian
        address.sin_addr.s_addr = found
        let raw = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw Failure(reason: "no socket (\(Errno(rawValue: errno)))") }
        socket = FileDescriptor(rawValue: raw)
        var on: Int32 = 1
        setsockopt(raw, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        let started = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(raw, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if started != 0, errno != EINPROGRESS {
            throw Failure(reason: "\(Errno(rawValue: errno))".lowercased())
        }
        phase = .connecting
    }

    private func finishConnecting() throws(Failure) {
        let raw = try openSocket().rawValue
        var pollfd = Glibc.pollfd(fd: raw, events: Int16(POLLOUT), revents: 0)
        guard poll(&pollfd, 1, 0) > 0 else { return }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(raw, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { throw Failure(reason: "\(Errno(rawValue: error))".lowercased()) }
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let request =
            "GET \(url.target) HTTP/1.1\r\nHost: \(url.host):\(url.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try writeAll(Array(request.utf8))
        phase = .handshaking(key: key, reply: [])
    }

    private func readHandshake(key: String, reply: [UInt8]) throws(Failure) {
        var reply = reply + (try readAvailable())
        guard let end = reply.firstRange(of: Array("\r\n\r\n".utf8)) else {
            guard reply.count <= Self.largestHandshake else { throw Failure(reason: "a handshake reply over \(Self.largestHandshake) bytes") }
            phase = .handshaking(key: key, reply: reply)
            return
        }
        let head = String(decoding: reply[..<end.lowerBound], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let status = lines.first, status.split(separator: " ").dropFirst().first == "101" else {
            let code = lines.first.map(String.init) ?? "no reply"
            throw Failure(reason: code.contains("401") ? "the relay wants a token: ws://HOST:PORT/?token=TOKEN" : "refused: \(code)")
        }
        let expected = WebSocketFrames.acceptValue(forKey: key)
        let accept = lines.first { $0.lowercased().hasPrefix("sec-websocket-accept:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmed() }
        guard accept == expected else { throw Failure(reason: "not a WebSocket server (bad Sec-WebSocket-Accept)") }
        reply.removeSubrange(..<end.upperBound)
        incoming = reply
        phase = .open
        if wasOpen {
            reconnect.cameBack()
            logger.notice("relay \(url) is back; aiming again")
        }
        wasOpen = true
    }

    /// Server frames: a close ends the connection, a ping gets its pong.
    private func readFrames() throws(Failure) {
        incoming += try readAvailable()
        while true {
            let next: (frame: WebSocketFrame, size: Int)?
            do {
                next = try WebSocketFrames.next(in: incoming[...], from: .server, largestPayload: Self.largestFrame)
            } catch {
                throw Failure(reason: "the relay sent \(error.reason)")
            }
            guard let (frame, size) = next else { return }
            incoming.removeFirst(size)
            let payload = frame.payload
            switch frame.opcode {
            case 0x8:
                let code = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : 1005
                throw Failure(
                    reason: "the relay closed the connection (\(code)\(payload.count > 2 ? ": " + String(decoding: payload[2...], as: UTF8.self) : ""))")
            case 0x9:
                unsent += Self.frame(opcode: 0xA, payload: payload)
            default:
                break
            }
        }
    }

    /// Sends queued commands as one text message, as far as the socket takes it.
    private func writePending() throws(Failure) {
        if unsent.isEmpty, !queue.isEmpty {
            let bytes = queue.pendingBytes
            queue.markWritten(bytes.count)
            unsent = Self.frame(opcode: 0x1, payload: bytes)
            bytesWritten += bytes.count
        }
        guard !unsent.isEmpty else { return }
        let raw = try openSocket().rawValue
        // send, not write: MSG_NOSIGNAL, so a relay gone away is an error here rather than a SIGPIPE.
        let written = unsent.withUnsafeBytes { Glibc.send(raw, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written > 0 {
            unsent.removeFirst(written)
        } else if written < 0, errno != EAGAIN, errno != EINTR {
            throw Failure(reason: "\(Errno(rawValue: errno))".lowercased())
        }
    }

    private func writeAll(_ bytes: [UInt8]) throws(Failure) {
        let raw = try openSocket().rawValue
        let written = bytes.withUnsafeBytes { Glibc.send(raw, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard written == bytes.count else { throw Failure(reason: "could not send the handshake") }
    }

    private func readAvailable() throws(Failure) -> [UInt8] {
        let socket = try openSocket()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count: Int
        do {
            count = try buffer.withUnsafeMutableBytes { try socket.read(into: $0, retryOnInterrupt: false) }
        } catch let error as Errno where error == .resourceTemporarilyUnavailable || error == .interrupted {
            return []
        } catch {
            throw Failure(reason: "\(error)".lowercased())
        }
        if count == 0 { throw Failure(reason: "the relay went away") }
        return Array(buffer[..<count])
    }

    private func openSocket() throws(Failure) -> FileDescriptor {
        guard let socket else { throw Failure(reason: "no connection") }
        return socket
    }

    /// A client frame: FIN, `opcode`, masked with a fresh key.
    static func frame(opcode: UInt8, payload: [UInt8]) -> [UInt8] {
        WebSocketFrames.encode(WebSocketFrame(opcode: opcode, payload: payload), from: .client)
    }
}
