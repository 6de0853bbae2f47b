import Geometry

/// Decides which commands actually go on the wire (SPEC §1.6).
///
/// - Never repeats the command last written on an axis: not an aim, not `L`,
///   not the parting command.
/// - `deadband`: an aim that moved by no more than this many degrees from the
///   last written aim on that axis is dropped.
///
/// When to give up on a face (`--lost-after`) is the tracker's business; this
/// filter only guards the wire.
public struct CommandFilter: Sendable {
    public var deadband: Int
    public var tiltEnabled: Bool

    private var lastPan: Command?
    private var lastTilt: Command?

    public init(deadband: Int = 0, tiltEnabled: Bool = false) {
        self.deadband = deadband
        self.tiltEnabled = tiltEnabled
    }

    /// The commands to write for an aim; `nil` means sweep (`L`).
    public mutating func commands(for aim: Aim?) -> [Command] {
        guard let aim else { return lostOnce() }
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

    /// Each of `commands` that differs from the last written on its axis,
    /// the deadband aside: for the parting command (`--on-exit`, a centring
    /// on exit is meant exactly) and for commands that arrive ready-made
    /// (the relay).
    public mutating func newOnly(_ commands: [Command]) -> [Command] {
        commands.filter { recordIfNew($0) }
    }

    /// `L`, unless it was the last command on the pan axis.
    private mutating func lostOnce() -> [Command] {
        recordIfNew(.lost) ? [.lost] : []
    }

    /// True (and remembered as written) when `command` differs from the last
    /// command on its axis.
    private mutating func recordIfNew(_ command: Command) -> Bool {
        switch command.axis {
        case .pan:
            guard command != lastPan else { return false }
            lastPan = command
        case .tilt:
            guard command != lastTilt else { return false }
            lastTilt = command
        case .trigger:
            break  // a shot is never a repeat: the fire control paces it
        }
        return true
    }

    /// The last command written on each axis (pan, then tilt).
    public var lastWritten: [Command] { [lastPan, lastTilt].compactMap { $0 } }

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
