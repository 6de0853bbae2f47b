#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import MonotonicTime

/// How a connection ended before its exchange did.
enum ConnectionEnd: Error {
    /// The peer closed it, reset it, or the server is stopping.
    case closed
    /// Nothing came (or nothing could be written) before the deadline.
    case timedOut
}

/// One accepted TCP connection, non-blocking, read and written with deadlines
/// (monotonic seconds): a peer that sends too slowly or never reads holds a
/// thread only until its deadline.
struct SocketConnection: Sendable {
    let descriptor: Int32

    /// Waits until `events` are possible or `deadline` passes.
    private func wait(for events: Int16, until deadline: Double) throws(ConnectionEnd) {
        while true {
            let left = deadline - monotonicSeconds()
            guard left > 0 else { throw .timedOut }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw .closed }
        }
    }

    /// At least one byte and at most `count`, as soon as some arrive.
    func read(upTo count: Int, until deadline: Double) throws(ConnectionEnd) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        while true {
            let got = bytes.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, count, 0) }
            if got > 0 { return Array(bytes[..<got]) }
            if got == 0 { throw .closed }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { throw .closed }
            try wait(for: Int16(POLLIN), until: deadline)
        }
    }

    /// All of `bytes`, or throws.
    func write(_ bytes: [UInt8], until deadline: Double) throws(ConnectionEnd) {
        var sent = 0
        while sent < bytes.count {
            // MSG_NOSIGNAL: a peer that left is an error here, not a SIGPIPE that ends sentry.
            let wrote = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if wrote > 0 {
                sent += wrote
                continue
            }
            guard wrote < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { throw .closed }
            try wait(for: Int16(POLLOUT), until: deadline)
        }
    }

    /// Ends the connection so that the peer reads what was written before it:
    /// no more writes, then what the peer still sends is read and dropped for a
    /// moment (closing with unread bytes would reset the connection and lose the answer).
    func finish() {
        shutdown(descriptor, Int32(SHUT_WR))
        let deadline = monotonicSeconds() + 0.5
        var drained = 0
        while drained < 1 << 20, let bytes = try? read(upTo: 16384, until: deadline) { drained += bytes.count }
        close(descriptor)
    }
}
