#if canImport(Glibc)
    import Glibc
#endif
import FoundationEssentials
import Synchronization
import Threading

/// A relay's IPv4 address, looked up off the frame loop's thread. A name server
/// that does not answer holds `getaddrinfo` for seconds; on the frame thread,
/// at every reconnection, that would stop the turret and the console with it.
/// Each reconnection takes the last address found and starts a new lookup
/// behind it (a board's address may change while it is away); an IP literal
/// needs none.
final class AddressLookup: Sendable {
    let host: String
    /// Finds `host`'s address (network byte order), or nil; `getaddrinfo` unless a test gives another.
    private let resolve: @Sendable (String) -> UInt32?

    private struct State {
        var address: UInt32?
        var looking = false
    }
    private let state = Mutex(State())

    /// An IPv4 literal: its own address, never looked up.
    let isLiteral: Bool

    init(host: String, resolve: @escaping @Sendable (String) -> UInt32? = AddressLookup.systemResolve) {
        self.host = host
        self.resolve = resolve
        var literal = in_addr()
        isLiteral = inet_pton(AF_INET, host, &literal) == 1
        if isLiteral { state.withLock { $0.address = literal.s_addr } }
    }

    /// Looks the name up now and waits: for the first connection, made before the frame loop runs.
    @discardableResult
    func lookUpNow() -> UInt32? {
        guard !isLiteral else { return state.withLock { $0.address } }
        let found = resolve(host)
        state.withLock { if let found { $0.address = found } }
        return found
    }

    /// The last address found, never waiting; starts a lookup in the background
    /// unless one runs (nil until the first one has answered).
    func latest() -> UInt32? {
        let (address, start) = state.withLock { state -> (UInt32?, Bool) in
            let start = !state.looking && !isLiteral
            if start { state.looking = true }
            return (state.address, start)
        }
        if start {
            startThread(named: "relay-lookup") { [self] in
                let found = resolve(host)
                state.withLock { state in
                    if let found { state.address = found }
                    state.looking = false
                }
            }
        }
        return address
    }

    /// `getaddrinfo` for an IPv4 address.
    @Sendable static func systemResolve(_ host: String) -> UInt32? {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &found) == 0, let first = found, let address = first.pointee.ai_addr else { return nil }
        defer { freeaddrinfo(found) }
        return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
    }
}
