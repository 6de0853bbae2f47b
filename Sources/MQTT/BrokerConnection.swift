#if canImport(Glibc)
    import Glibc
#endif
import MonotonicTime
import Threading

/// Why the broker cannot be reached or talked to, in one line.
public struct MQTTConnectionError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A TCP connection to a broker, with deadlines: a broker that stops
/// answering or reading costs the client's own thread a bounded wait,
/// never anyone else's. Woken early by `wake` (another thread has
/// something to send).
final class BrokerConnection {
    private let socket: Int32
    /// Polled beside the socket: another thread has something to send.
    private let wake: WakePipe
    /// A write may wait this long for the broker to take bytes.
    static let writeTimeout = 10.0

    /// Connects to `host:port` within `timeout` seconds (the name looked up first, which may take as long as the resolver does).
    /// A wake-up while it waits ends the wait when `isCancelled` says so (the client is stopping).
    init(host: String, port: Int, timeout: Double, wake: WakePipe, isCancelled: () -> Bool) throws(MQTTConnectionError) {
        self.wake = wake
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(host, String(port), &hints, &found)
        guard lookup == 0, let first = found else {
            throw MQTTConnectionError("\(String(cString: gai_strerror(lookup))); check the host in --mqtt")
        }
        defer { freeaddrinfo(found) }
        let file = Glibc.socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard file >= 0 else { throw MQTTConnectionError("a socket: \(String(cString: strerror(errno)))") }
        socket = file
        if Glibc.connect(file, first.pointee.ai_addr, first.pointee.ai_addrlen) != 0 {
            guard errno == EINPROGRESS else {
                let reason = String(cString: strerror(errno))
                close(file)
                throw MQTTConnectionError(reason)
            }
            let deadline = monotonicSeconds() + timeout
            var error: Int32 = 0
            while true {
                var ready = [pollfd(fd: file, events: Int16(POLLOUT), revents: 0), pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
                let left = deadline - monotonicSeconds()
                let count = left > 0 ? poll(&ready, 2, Int32(left * 1000)) : 0
                if ready[1].revents != 0 {
                    wake.drain()
                    if isCancelled() {
                        close(file)
                        throw MQTTConnectionError("stopped while connecting")
                    }
                }
                if ready[0].revents != 0 { break }
                guard count != 0 || monotonicSeconds() < deadline else {
                    close(file)
                    throw MQTTConnectionError("no answer within \(Int(timeout)) s")
                }
            }
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(file, SOL_SOCKET, SO_ERROR, &error, &size) == 0, error == 0 else {
                close(file)
                throw MQTTConnectionError(String(cString: strerror(error)))
            }
        }
        var on: Int32 = 1
        setsockopt(file, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(socket) }

    /// Writes all of `bytes`; throws when the broker takes none for `writeTimeout`.
    func write(_ bytes: [UInt8]) throws(MQTTConnectionError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                sent += count
                continue
            }
            guard count < 0, errno == EAGAIN || errno == EINTR else {
                throw MQTTConnectionError("the connection broke (\(String(cString: strerror(errno))))")
            }
            var ready = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            guard poll(&ready, 1, Int32(Self.writeTimeout * 1000)) == 1 else {
                throw MQTTConnectionError("the broker took nothing for \(Int(Self.writeTimeout)) s")
            }
        }
    }

    /// What came in within `seconds` (empty: nothing did, or `wake` was called); throws when the broker closed the connection.
    func read(waitingAtMost seconds: Double) throws(MQTTConnectionError) -> [UInt8] {
        var ready = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
        guard poll(&ready, 2, Int32(max(0, seconds) * 1000)) > 0 else { return [] }
        if ready[1].revents != 0 { wake.drain() }
        guard ready[0].revents != 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress!, $0.count, 0) }
        if count > 0 { return Array(buffer[..<count]) }
        if count < 0, errno == EAGAIN || errno == EINTR { return [] }
        throw MQTTConnectionError(count == 0 ? "the broker closed the connection" : "the connection broke (\(String(cString: strerror(errno))))")
    }
}
