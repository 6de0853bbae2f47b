import Turret
import TurretProtocol

/// When `--fire` sends `F<pan>.`: only while the target is locked, the
/// turret points at it within `tolerance` degrees and stands still, and at
/// most once per `cooldown` seconds. The fire command carries the pan angle
/// the host last told the firmware, which the firmware checks against the
/// one it holds.
///
/// The host asks its own model of the firmware (`TurretModel`, on the
/// frames' clock) whether the shot would be accepted, a little in the past
/// (`wireMargin`). The firmware times its rules by its own clock, which is
/// the wall clock when the commands went out, not the frames': a frame
/// processed late would otherwise send a shot sooner after the last one
/// than the frame times say. So the firmware's rules (each aim's travel and
/// settling, its interval) and the cooldown are also checked on the wire's
/// clock, against a second model fed the commands as they went out (`sent`).
/// The cooldown counts from the moment the shot's bytes were handed to the
/// port (`written`), not from when the frame decided it: work between the
/// two (events, a starved thread) would otherwise shorten it on the wire.
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

    public var settings: Settings
    /// On the wire's clock: the last shot.
    private var lastShot: Double?
    /// The firmware as the wire's clock sees it: every command fed at the
    /// moment it went out. Frames processed late write their aims in a burst,
    /// closer together than the frames' times say, and the firmware adds each
    /// aim's travel as it arrives: an F timed to the frames' model alone was
    /// refused under load (a horn 58° away, 0.3 s to travel and settle, shot at 0.15 s).
    private var onTheWire = ServoController()

    public init(_ settings: Settings) {
        self.settings = settings
    }

    /// The fire command to send for the frame of `time`, going on the wire
    /// at `wireTime`, if every rule allows it.
    public mutating func shot(
        locked: Bool, aimError: (pan: Double, tilt: Double)?, turret: TurretModel,
        at time: Double, wireTime: Double
    ) -> Command? {
        guard locked, let aimError, abs(aimError.pan) <= settings.tolerance, abs(aimError.tilt) <= settings.tolerance else { return nil }
        return acceptedShot(turret: turret, at: time, wireTime: wireTime)
    }

    /// The fire command at the angle the firmware holds, if the firmware
    /// would take it now (settled, standing still, its interval) and the
    /// cooldown has passed; whether to shoot at all is the caller's.
    public mutating func acceptedShot(turret: TurretModel, at time: Double, wireTime: Double) -> Command? {
        if cooldownLeft(at: wireTime) > 0 { return nil }
        var turret = turret
        turret.advance(to: time)
        let held = turret.controller
        guard abs(turret.pan - Double(held.pan)) < Self.stillWithin, abs(turret.tilt - Double(held.tilt)) < Self.stillWithin,
            held.fireRefusal(held.pan, at: time - Self.wireMargin) == nil,
            onTheWire.fireRefusal(held.pan, at: wireTime - Self.wireMargin) == nil
        else { return nil }
        lastShot = wireTime
        let shot = Command.fire(held.pan)
        onTheWire.receive(shot, at: wireTime)
        return shot
    }

    /// Seconds of cooldown left at `wireTime` (0: a shot may go).
    public func cooldownLeft(at wireTime: Double) -> Double {
        guard let lastShot else { return 0 }
        // The cooldown, and never within the firmware's own interval (with the wire's slack).
        return max(0, max(settings.cooldown, ServoController.fireMinimumInterval + Self.wireMargin) - (wireTime - lastShot))
    }

    /// Notes that the last shot's bytes were handed to the port at `wireTime`:
    /// the cooldown counts from then.
    public mutating func written(at wireTime: Double) {
        guard let lastShot else { return }
        self.lastShot = max(lastShot, wireTime)
    }

    /// Notes the aims and sweeps that went on the wire at `wireTime`.
    public mutating func sent(_ commands: [Command], wireTime: Double) {
        for command in commands { onTheWire.receive(command, at: wireTime) }
    }
}
