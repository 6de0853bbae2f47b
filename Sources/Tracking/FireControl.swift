import SentryCore

/// When `--fire` sends `F<pan>.`: only while the target is locked, the
/// turret points at it within `tolerance` degrees and stands still, and at
/// most once per `cooldown` seconds. The fire command carries the pan angle
/// the host last told the firmware, which the firmware checks against the
/// one it holds.
///
/// The host asks its own model of the firmware (`TurretModel`) whether the
/// shot would be accepted, a little in the past (`wireMargin`), so that
/// timing on the wire never turns an accepted shot into a refused one.
public struct FireControl: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Degrees between the aim and the target, on each axis, that still count as aimed.
        public var tolerance: Double
        /// Seconds between shots (at least the firmware's minimum interval).
        public var cooldown: Double

        public static let defaultTolerance = 2.0
        public static let defaultCooldown = 3.0

        public init(tolerance: Double = defaultTolerance, cooldown: Double = defaultCooldown) {
            self.tolerance = tolerance
            self.cooldown = cooldown
        }
    }

    /// Slack for the time the bytes spend on their way to the board.
    static let wireMargin = 0.05
    /// The turret stands still when its horns are this close to the command.
    static let stillWithin = 0.5

    public let settings: Settings
    private var lastShot: Double?

    public init(_ settings: Settings) {
        self.settings = settings
    }

    /// The fire command to send at `time`, if every rule allows it.
    public mutating func shot(locked: Bool, aimError: (pan: Double, tilt: Double)?, turret: TurretModel,
                              at time: Double) -> Command? {
        guard locked, let aimError, abs(aimError.pan) <= settings.tolerance, abs(aimError.tilt) <= settings.tolerance else { return nil }
        if let lastShot, time - lastShot < settings.cooldown { return nil }
        var turret = turret
        turret.advance(to: time)
        let held = turret.controller
        guard abs(turret.pan - Double(held.pan)) < Self.stillWithin, abs(turret.tilt - Double(held.tilt)) < Self.stillWithin,
              held.fireRefusal(held.pan, at: time - Self.wireMargin) == nil else { return nil }
        lastShot = time
        return .fire(held.pan)
    }
}
