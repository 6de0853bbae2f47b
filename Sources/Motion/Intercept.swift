/// When and where to shoot so that a dart meets a target moving at a steady
/// angular speed, on one axis (pan): the turret slews to the aim at the
/// servo's speed, stands there `settle` seconds (the firmware fires only at
/// an angle it has held), and the shot takes `delay` seconds from the
/// trigger to arrival (the trigger's own delay plus the dart's flight).
///
/// The aim for a shot at `now + τ` is where the target will be at
/// `now + τ + delay`; the shot is possible once the turret can have got
/// there and settled: `|aim(τ) − turret| / servoSpeed + settle ≤ τ`. The
/// earliest such τ is the answer (the left side is convex in τ, so the
/// possible times are one interval, and its start is 0 or where one of the
/// two straight pieces meets τ).
public struct Intercept: Sendable, Equatable {
    /// The target's angle at `now` and its speed (degrees, degrees per second).
    public var target: Double
    public var targetSpeed: Double
    /// Where the turret points at `now`.
    public var turret: Double
    /// Degrees per second the servo turns (60 / `--servo-speed`).
    public var servoSpeed: Double
    /// Seconds the aim must be held before the shot.
    public var settle: Double
    /// Seconds from the trigger to the dart's arrival.
    public var delay: Double

    public init(target: Double, targetSpeed: Double, turret: Double, servoSpeed: Double, settle: Double, delay: Double) {
        precondition(servoSpeed > 0 && settle >= 0 && delay >= 0)
        self.target = target
        self.targetSpeed = targetSpeed
        self.turret = turret
        self.servoSpeed = servoSpeed
        self.settle = settle
        self.delay = delay
    }

    /// A shot: `after` seconds from now, at `aim` degrees.
    public struct Shot: Sendable, Equatable {
        public var after: Double
        public var aim: Double

        public init(after: Double, aim: Double) {
            self.after = after
            self.aim = aim
        }
    }

    /// The aim for a shot `τ` seconds from now: where the target is when the dart arrives.
    public func aim(shotAfter τ: Double) -> Double { target + targetSpeed * (τ + delay) }

    /// How much later than `τ` the turret could be ready for that shot (≤ 0: it can shoot then).
    public func lateness(shotAfter τ: Double) -> Double {
        abs(aim(shotAfter: τ) - turret) / servoSpeed + settle - τ
    }

    /// The earliest shot, or nil when the turret cannot catch the target
    /// (it moves away at least as fast as the servo turns).
    public var earliest: Shot? {
        let offset = target + targetSpeed * delay - turret  // aim(τ) − turret = offset + targetSpeed·τ
        let ratio = targetSpeed / servoSpeed
        var candidates = [0.0]
        // Target ahead of the turret: (offset + v·τ)/s + settle = τ.
        if 1 - ratio > 0 { candidates.append((offset / servoSpeed + settle) / (1 - ratio)) }
        // Target behind it: (−offset − v·τ)/s + settle = τ.
        if 1 + ratio > 0 { candidates.append((-offset / servoSpeed + settle) / (1 + ratio)) }
        let tolerance = 1e-9 * max(1, abs(offset) / servoSpeed + settle)
        guard let τ = candidates.filter({ $0 >= 0 && lateness(shotAfter: $0) <= tolerance }).min() else { return nil }
        return Shot(after: τ, aim: aim(shotAfter: τ))
    }
}
