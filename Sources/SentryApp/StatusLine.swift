import SentryCore

/// The heads-up line on stderr, as in the original tracker's HUD:
/// `Sentry mode — no targets` or `Shooting — X: 93 | Y: 71`, plus frame rate
/// and serial state.
public struct StatusLine: Sendable {
    /// The HUD text for a target's aim (or none).
    public static func hud(for aim: Aim?, tiltEnabled: Bool) -> String {
        guard let aim else { return "Sentry mode — no targets" }
        return tiltEnabled ? "Shooting — X: \(aim.pan) | Y: \(aim.tilt)" : "Shooting — X: \(aim.pan)"
    }

    /// The whole line.
    public static func line(hud: String, framesPerSecond: Double, serial: String) -> String {
        let fps = framesPerSecond.isFinite ? Int(framesPerSecond.rounded()) : 0
        return "\(hud)   \(fps) fps   serial: \(serial)"
    }
}
