/// Decides which commands actually go on the wire (SPEC §1.6).
///
/// - Never repeats the command last written on an axis.
/// - `deadband`: an aim that moved by no more than this many degrees from the
///   last written aim on that axis is dropped.
/// - `lostAfter`: `L` is sent only once no face has been seen for this many
///   seconds; a face seen again before that cancels it.
///
/// Time is passed in (seconds on any monotonic clock), so tests control it.
public struct CommandFilter: Sendable {
    public var deadband: Int
    public var lostAfter: Double
    public var tiltEnabled: Bool

    private var lastPan: Command?
    private var lastTilt: Command?
    private var missingSince: Double?

    public init(deadband: Int = 0, lostAfter: Double = 0, tiltEnabled: Bool = false) {
        self.deadband = deadband
        self.lostAfter = lostAfter
        self.tiltEnabled = tiltEnabled
    }

    /// The commands to write for this frame: `aim` is the target's angles,
    /// or `nil` when no face is in view.
    public mutating func commands(for aim: Aim?, at time: Double) -> [Command] {
        guard let aim else {
            let since = missingSince ?? time
            missingSince = since
            return time - since >= lostAfter ? lostOnce() : []
        }
        missingSince = nil
        var out: [Command] = []
        if let pan = accept(.pan(aim.pan), after: lastPan) {
            lastPan = pan
            out.append(pan)
        }
        if tiltEnabled, let tilt = accept(.tilt(aim.tilt), after: lastTilt) {
            lastTilt = tilt
            out.append(tilt)
        }
        return out
    }

    /// `L` now, whatever the debounce says (the camera itself is gone);
    /// nothing if `L` was the last command.
    public mutating func lostNow() -> [Command] {
        missingSince = nil
        return lostOnce()
    }

    /// `L`, unless it was the last command on the pan axis.
    private mutating func lostOnce() -> [Command] {
        guard lastPan != .lost else { return [] }
        lastPan = .lost
        return [.lost]
    }

    /// Forgets what was written, so the next aim is sent again (after a
    /// reconnect, the device may have rebooted).
    public mutating func reset() {
        lastPan = nil
        lastTilt = nil
    }

    private func accept(_ command: Command, after last: Command?) -> Command? {
        switch (command, last) {
        case (.pan(let new), .pan(let old)?), (.tilt(let new), .tilt(let old)?):
            return abs(new - old) > deadband ? command : nil
        default:
            return command
        }
    }
}
