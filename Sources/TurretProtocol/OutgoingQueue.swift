/// Commands waiting for a slow serial port, newest aim first (SPEC §5).
///
/// At most one command per axis waits: a newer aim replaces an older one
/// that has not started to go out, so a stuck port never builds up latency.
/// A command that went out in part is always finished first, so the line
/// never carries a broken command. A waiting shot (`F`) is dropped when a
/// new aim arrives: it confirms an aim that is about to change.
public struct OutgoingQueue: Sendable, Equatable {
    /// The unsent rest of a partly written command.
    private var started: [UInt8] = []
    /// Commands not yet started, oldest first, at most one per axis.
    private var waiting: [Command] = []

    public init() {}

    public var isEmpty: Bool { started.isEmpty && waiting.isEmpty }

    /// Queues `command`, dropping a waiting command of the same axis (and a
    /// waiting shot, for a new aim).
    public mutating func enqueue(_ command: Command) {
        waiting.removeAll { $0.axis == command.axis || $0.axis == .trigger }
        waiting.append(command)
    }

    /// The bytes to write next, in order.
    public var pendingBytes: [UInt8] { started + waiting.flatMap(\.bytes) }

    /// Records that the first `count` of `pendingBytes` were written.
    public mutating func markWritten(_ count: Int) {
        var remaining = count
        let fromStarted = min(remaining, started.count)
        started.removeFirst(fromStarted)
        remaining -= fromStarted
        while remaining > 0, !waiting.isEmpty {
            let bytes = waiting.removeFirst().bytes
            if remaining < bytes.count { started = Array(bytes[remaining...]) }
            remaining -= min(remaining, bytes.count)
        }
    }

    /// Forgets everything (after the device went away).
    public mutating func removeAll() {
        started = []
        waiting = []
    }
}
