import Logging
import MonotonicTime
import Synchronization
import TextOutput

/// Refused requests (a wrong token, a foreign host or origin), logged with the
/// peer's address: at most one line per kind every `interval` seconds, the next
/// one saying how many were refused in between, so a flood cannot fill the log.
public final class RefusalLog: Sendable {
    /// Where the lines go (the server's other debug lines, too).
    public let logger: Logger
    private let interval: Double
    private let kinds = Mutex<[String: (last: Double, unlogged: Int)]>([:])

    public init(logger: Logger, interval: Double = 10) {
        self.logger = logger
        self.interval = interval
    }

    /// Counts one refusal of `kind`; logs it unless one of its kind was logged within `interval`.
    public func note(kind: String, peer: String, message: String) {
        let now = monotonicSeconds()
        let unlogged: Int? = kinds.withLock { kinds in
            var entry = kinds[kind] ?? (last: -.infinity, unlogged: 0)
            defer { kinds[kind] = entry }
            guard now - entry.last >= interval else {
                entry.unlogged += 1
                return nil
            }
            defer { entry = (now, 0) }
            return entry.unlogged
        }
        guard let unlogged else { return }
        let line = "refused \(peer): \(message)\(unlogged > 0 ? " (and \(unlogged) more like it since the last such line)" : "")"
        logger.warning("\(line.oneLine)")
    }
}
