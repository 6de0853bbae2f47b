import ArgumentParser
import Events
import SentryApp
import TextOutput
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

    @Option(
        help: ArgumentHelp(
            "A shell command run on each event of a kind: arrive, lock, lost, shot or expression (KIND=CMD; repeat for others). Same environment as --on-lock, with SENTRY_EVENT the kind.",
            valueName: "kind=cmd"))
    var onEvent: [String] = []

    @Option(parsing: .unconditional, help: "Seconds before a hook still running is killed.")
    var hookTimeout: Double = EventHookSettings.defaultTimeout

    @Flag(
        inversion: .prefixedNo,
        help:
            "Arm: send the fire command F<pan>. while the target is locked and aimed at, never when the fire point lies on a face (the bundled firmware pulses pin 7). Needs --tilt, or --pan-only-below-heads. Off: nothing new on the wire. A command-line act: a settings file cannot arm sentry."
    )
    var fire = false

    @Flag(
        help:
            "With --fire and no tilt servo: the blaster is mounted below head height and shoots level, so its shots pass under faces. Without it, --fire needs --tilt to aim the fire point.")
    var panOnlyBelowHeads = false

    @Option(parsing: .unconditional, help: LiveSetting.fireCooldown.flagHelp)
    var fireCooldown: Double = FireControl.Settings.defaultCooldown

    @Option(parsing: .unconditional, help: LiveSetting.fireTolerance.flagHelp)
    var fireTolerance: Double = FireControl.Settings.defaultTolerance

    @Option(
        parsing: .unconditional,
        help:
            "Aim this many face heights below the face's centre when armed, and draw the fire point there (1.5: the chest). With --fire at least 1: no shot is ever taken with the fire point on a face (docs/guide/safety.md).")
    var fireBelow: Double = 1.5

    @Option(
        parsing: .unconditional,
        help: "Seconds from the fire command reaching the turret to the dart leaving it (solenoid, flywheel spin-up); calibration.md says how to time it.")
    var triggerDelay: Double = LeadSettings.typical.triggerDelay

    @Option(parsing: .unconditional, help: "The dart's speed leaving the barrel, metres per second (a foam-dart blaster: 10 to 30).")
    var muzzleSpeed: Double = LeadSettings.typical.muzzleSpeed

    @Option(
        parsing: .unconditional,
        help: "Centimetres across the detector's box on an adult's face: with --fov it gives a face's distance, and so the dart's flight time.")
    var faceWidth: Double = LeadSettings.typical.faceWidth * 100

    @Option(parsing: .unconditional, help: "Metres to every target, instead of the distance from the face's size (--face-width).")
    var range: Double?

    func validate() throws {
        try LiveSetting.lockAfter.check(lockAfter)
        try checkRange(triggerDelay, "trigger-delay", 0...2, " seconds")
        try checkRange(muzzleSpeed, "muzzle-speed", 1...200, " metres per second (a foam dart: 10 to 30)")
        try checkRange(faceWidth, "face-width", 5...40, " centimetres (an adult's face: about 15)")
        if let range { try checkRange(range, "range", 0.3...50, " metres") }
        try checkRange(hookTimeout, "hook-timeout", 0.1...3600, " seconds")
        try LiveSetting.fireCooldown.check(fireCooldown)
        try LiveSetting.fireTolerance.check(fireTolerance)
        try checkRange(fireBelow, "fire-below", 0...5, " face heights below the face's centre (1.5: the chest)")
        if fire, fireBelow < FirePoint.smallestBelow {
            throw ValidationError(
                "--fire-below \(String(printf: "%g", fireBelow)) puts the fire point on the face, where an armed sentry never fires; with --fire use \(String(printf: "%g", FirePoint.smallestBelow)) or more (1.5: the chest)"
            )
        }
        _ = try eventCommands()
    }

    /// `--on-event`'s commands by kind, with `--on-lock` and `--on-lost` among them; one command per kind.
    func eventCommands() throws -> [EventKind: String] {
        let kinds = EventKind.allCases.map(\.rawValue).joined(separator: ", ")
        var commands: [EventKind: String] = [:]
        let given = onEvent.map { text -> (String, Substring, Substring) in
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return ("--on-event \(text)", parts[0], parts.count > 1 ? parts[1] : "")
        } + [("--on-lock", "lock", onLock), ("--on-lost", "lost", onLost)].compactMap { flag, kind, command in command.map { (flag, kind, Substring($0)) } }
        for (flag, kindName, command) in given {
            guard let kind = EventKind(rawValue: String(kindName)) else {
                throw ValidationError("\(flag): '\(kindName)' is no event; give KIND=CMD with KIND one of \(kinds), e.g. --on-event 'arrive=notify-send sentry \"$SENTRY_EVENT\"'")
            }
            guard !command.allSatisfy(\.isWhitespace) else {
                let example = flag.hasPrefix("--on-event") ? " after '=', e.g. --on-event '\(kind.rawValue)=" : ", e.g. \(flag) '"
                throw ValidationError("\(flag) needs a shell command\(example)notify-send sentry \"$SENTRY_EVENT\"'")
            }
            guard commands[kind] == nil else {
                throw ValidationError("\(flag): \(kind.rawValue) has a command already (--on-event \(kind.rawValue)=… and --on-\(kind.rawValue) are one); join them in one shell command")
            }
            commands[kind] = String(command)
        }
        return commands
    }

    var hooks: EventHookSettings {
        var hooks = EventHookSettings(commands: (try? eventCommands()) ?? [:])
        hooks.timeout = hookTimeout
        return hooks
    }

    /// What the lead needs to know of the blaster and the targets.
    var leadSettings: LeadSettings {
        LeadSettings(triggerDelay: triggerDelay, muzzleSpeed: muzzleSpeed, faceWidth: faceWidth / 100, fixedRange: range)
    }

    /// The fire control's settings; `nil` without `--fire`.
    var fireSettings: FireControl.Settings? { fire ? FireControl.Settings(tolerance: fireTolerance, cooldown: fireCooldown) : nil }
}
