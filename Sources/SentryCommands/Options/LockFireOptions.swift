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

    @Option(
        parsing: .unconditional,
        help:
            "With --fire, aim this many face heights below the face's centre: the fire point is off the face (1.5: the chest). 0 aims at the face; never with anything that can hurt an eye (docs/guide/safety.md).")
    var fireBelow: Double = 1.5

    func validate() throws {
        try LiveSetting.lockAfter.check(lockAfter)
        try checkRange(hookTimeout, "hook-timeout", 0.1...3600, " seconds")
        try LiveSetting.fireCooldown.check(fireCooldown)
        try LiveSetting.fireTolerance.check(fireTolerance)
        try checkRange(fireBelow, "fire-below", 0...5, " face heights below the face's centre (1.5: the chest)")
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
