import TurretProtocol

/// What the turret is told when the host lets go of it (`--on-exit`): when
/// sentry exits, and when a relay's controller leaves.
public enum ExitCommand: String, CaseIterable, Sendable {
    /// Stand still where it is (the default, SPEC §8's safety: a stop leaves
    /// the turret still): nothing when it holds an aim, and the angle a sweep
    /// has reached when it sweeps (an `X`, which stops a sweep on the
    /// original sketch too).
    case hold
    /// `L`: sweep, as if nobody were there (the original's behaviour).
    case scan
    /// Aim at 90° on every axis in use.
    case center
    /// Send nothing: a sweep goes on.
    case none

    /// The commands to write at `time`, recorded in `turret` as written;
    /// none that repeats the last one written on its axis.
    public func commands(for turret: inout TurretState, at time: Double) -> [Command] {
        let wanted: [Command] =
            switch self {
            case .hold: turret.sweepStop(at: time)
            case .scan: [.lost]
            case .center: turret.filter.tiltEnabled ? [.pan(90), .tilt(90)] : [.pan(90)]
            case .none: []
            }
        return turret.writeNew(wanted, at: time)
    }
}

extension TurretState {
    /// An aim at the angle a sweep has reached by `time` (as the host models
    /// the firmware), or nothing when the turret is not sweeping.
    func sweepStop(at time: Double) -> [Command] {
        guard filter.lastWritten.contains(.lost) else { return [] }
        var now = model
        now.advance(to: time)
        return [.pan(now.controller.pan)]
    }
}
