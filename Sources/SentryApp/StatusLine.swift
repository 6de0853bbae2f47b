import Expressions
import Geometry
import Tracking
import TurretLinks

/// The heads-up line on stderr, as in the original tracker's HUD:
/// `Sentry mode — no targets`, `Tracking — X: 93 | Y: 71` (`Shooting` only
/// when armed with `--fire`: a builder must not read a turret that cannot
/// fire as one that will), or `Locked — X: 93 | Y: 71` once the target is
/// held `--lock-after` seconds, `Spared — smiling — X: 93 | Y: 71` while it shows the `--spare`
/// state; plus frame rate and serial state.
public struct StatusLine: Sendable {
    /// The HUD text for a target's aim (or none).
    public static func hud(
        for aim: Aim?, locked: Bool = false, armed: Bool, tiltEnabled: Bool, steering: Steering = .tracking, spared: ExpressionState? = nil
    ) -> String {
        if steering == .manualScan { return "Manual — scanning" }
        guard let aim else { return "Sentry mode — no targets" }
        let mode = steering.isManual ? "Manual" : spared.map { "Spared — \($0.participle)" } ?? (locked ? "Locked" : armed ? "Shooting" : "Tracking")
        return tiltEnabled ? "\(mode) — X: \(aim.pan) | Y: \(aim.tilt)" : "\(mode) — X: \(aim.pan)"
    }

    /// The whole line.
    public static func line(hud: String, framesPerSecond: Double, serial: LinkState) -> String {
        let fps = framesPerSecond.isFinite ? Int(framesPerSecond.rounded()) : 0
        return "\(hud)   \(fps) fps   serial: \(serial)"
    }
}
