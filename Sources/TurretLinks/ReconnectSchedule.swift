import MonotonicTime

/// When a link that went down tries again, and whether it has come back
/// since the pipeline last asked: the part of reconnecting that the serial
/// port and the relay share.
struct ReconnectSchedule {
    /// A new attempt every half second: a replugged board is found within
    /// half a second, and a missing one costs two cheap attempts a second.
    static let retryInterval = 0.5

    private var nextAttempt = 0.0
    private var reconnected = false

    /// True when an attempt is due now; the next one is then due an interval later.
    mutating func attemptIsDue(at now: Double = monotonicSeconds()) -> Bool {
        guard now >= nextAttempt else { return false }
        nextAttempt = now + Self.retryInterval
        return true
    }

    /// How long until the next attempt is due (0 when it is due now).
    func secondsUntilAttempt(at now: Double = monotonicSeconds()) -> Double {
        max(0, nextAttempt - now)
    }

    /// The link went down: the first attempt comes an interval from now.
    mutating func wentDown(at now: Double = monotonicSeconds()) {
        nextAttempt = now + Self.retryInterval
    }

    /// Try at the next chance rather than at the next interval (udev saw the device come).
    mutating func retryNow() {
        nextAttempt = 0
    }

    /// The link is back after being down.
    mutating func cameBack() {
        reconnected = true
    }

    /// True once after the link came back.
    mutating func takeReconnected() -> Bool {
        defer { reconnected = false }
        return reconnected
    }
}
