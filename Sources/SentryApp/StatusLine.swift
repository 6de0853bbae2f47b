import Expressions
import Geometry
import Tracking
import TurretLinks

/// The heads-up line on stderr, as in the original tracker's HUD:
/// `Sentry mode — no targets`, `Tracking — X: 93 | Y: 71` (`Shooting` only
/// when armed with `--fire`: a builder must not read a turret that cannot
/// fire as one that will), or `Locked — X: 93 | Y: 71` once the target is
/// held `--lock-after` seconds, `Spared — smiling — X: 93 | Y: 71` while it shows the `--spare`
/// state; plus frame rate and serial state. Armed (`--fire`), every line
/// starts with `ARMED ·`, and a locked target fire is held at says why
/// (`Locked, holding fire: fire point on a face`): armed is always visible.
/// With `--known`, who the target is follows the mode once read
/// (`Locked · alice — X: 93`, `Tracking · stranger — X: 93`).
public struct StatusLine: Sendable {
    /// The HUD text for a target's aim (or none).
    public static func hud(
        for aim: Aim?, locked: Bool = false, armed: Bool, tiltEnabled: Bool, steering: Steering = .tracking, spared: ExpressionState? = nil,
        heldFire: HeldFire? = nil, person: String? = nil
    ) -> String {
        let armedMark = armed ? "ARMED · " : ""
        if steering == .manualScan { return armedMark + "Manual — scanning" }
        guard let aim else { return armedMark + "Sentry mode — no targets" }
        let lockedMode = heldFire.map { "Locked, holding fire: \($0.rawValue)" } ?? "Locked"
        let mode = (steering.isManual ? "Manual" : spared.map { "Spared — \($0.participle)" } ?? (locked ? lockedMode : armed ? "Shooting" : "Tracking"))
            + (person.map { " · \($0)" } ?? "")
        return armedMark + (tiltEnabled ? "\(mode) — X: \(aim.pan) | Y: \(aim.tilt)" : "\(mode) — X: \(aim.pan)")
    }

    /// The HUD text for a frame's outcome.
    static func hud(for outcome: FrameOutcome) -> String {
        let result = outcome.result
        return hud(
            for: result.aim, locked: result.isLocked, armed: outcome.settings.fire != nil, tiltEnabled: outcome.settings.tiltEnabled,
            steering: outcome.steering, spared: result.spared, heldFire: result.heldFire, person: result.personName)
    }

    /// The whole line.
    public static func line(hud: String, framesPerSecond: Double, serial: LinkState) -> String {
        let fps = framesPerSecond.isFinite ? Int(framesPerSecond.rounded()) : 0
        return "\(hud)   \(fps) fps   serial: \(serial)"
    }
}
