import ArgumentParser
import SentryApp
import Tracking
import TurretProtocol

/// When the target counts as locked, what runs then, and the trigger (`run`).
struct LockFireOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: LiveSetting.lockAfter.flagHelp)
    var lockAfter: Double = 2

    @Option(
        help:
            "A shell command run when the target is locked; SENTRY_EVENT, SENTRY_PAN, SENTRY_TILT, SENTRY_BOX (x,y,w,h), SENTRY_TIME in its environment. One at a time, never blocking a frame."
    )
    var onLock: String?

    @Option(help: "A shell command run when the locked target is lost (same environment, SENTRY_BOX where it was last seen).")
    var onLost: String?

    @Option(parsing: .unconditional, help: "Seconds before a hook still running is killed.")
    var hookTimeout: Double = LockHookSettings.defaultTimeout

    @Flag(
        inversion: .prefixedNo,
        help: "Send the fire command F<pan>. while the target is locked and aimed at (the bundled firmware pulses pin 7). Off: nothing new on the wire.")
    var fire = false

    @Option(parsing: .unconditional, help: LiveSetting.fireCooldown.flagHelp)
    var fireCooldown: Double = FireControl.Settings.defaultCooldown

    @Option(parsing: .unconditional, help: LiveSetting.fireTolerance.flagHelp)
    var fireTolerance: Double = FireControl.Settings.defaultTolerance

    func validate() throws {
        try LiveSetting.lockAfter.check(lockAfter)
        try checkRange(hookTimeout, "hook-timeout", 0.1...3600, " seconds")
        try LiveSetting.fireCooldown.check(fireCooldown)
        try LiveSetting.fireTolerance.check(fireTolerance)
        for (flag, command) in [("on-lock", onLock), ("on-lost", onLost)] {
            if let command, command.allSatisfy(\.isWhitespace) {
                throw ValidationError("--\(flag) needs a shell command, e.g. --\(flag) 'notify-send sentry \"$SENTRY_EVENT\"'")
            }
        }
    }

    var hooks: LockHookSettings {
        var hooks = LockHookSettings(onLock: onLock, onLost: onLost)
        hooks.timeout = hookTimeout
        return hooks
    }

    /// The fire control's settings; `nil` without `--fire`.
    var fireSettings: FireControl.Settings? { fire ? FireControl.Settings(tolerance: fireTolerance, cooldown: fireCooldown) : nil }
}
