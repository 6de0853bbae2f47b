import Geometry

/// A target held for `lockAfter` seconds is *locked* (the smile doorbell's
/// "held for two seconds"): the moment to take a photo, notify someone, or
/// allow a shot. The lock is lost when the tracker lets go of that target
/// (out of sight longer than `--lost-after`, or another face took over).
public struct LockOn: Sendable {
    public enum Event: Sendable, Equatable {
        /// The target was locked, seen in `box`.
        case locked(Box)
        /// The locked target was let go of; it was last seen in `box`.
        case lost(Box)
    }

    public var lockAfter: Double
    public private(set) var isLocked = false
    /// The target being held: since when, and where it was last seen.
    private var held: (id: Int, since: Double, box: Box?)?

    public init(lockAfter: Double = 2) {
        self.lockAfter = lockAfter
    }

    /// The tracker's target this frame (`nil`: none) and its box when in
    /// sight; returns the lock's change, if any.
    public mutating func update(targetID: Int?, box: Box?, at time: Double) -> Event? {
        var lost: Event?
        if targetID != held?.id {
            if isLocked, let box = held?.box { lost = .lost(box) }
            isLocked = false
            held = targetID.map { ($0, time, nil) }
        }
        guard let id = held?.id, let since = held?.since else { return lost }
        if let box { held = (id, since, box) }
        // A lock needs the target in sight; a new target reports the loss first.
        guard lost == nil, !isLocked, let box, time - since >= lockAfter else { return lost }
        isLocked = true
        return .locked(box)
    }
}
