import Geometry
import Motion
import Turret
import TurretProtocol

/// Shooting a target that walks (issue 71): the turret cannot fire while
/// it moves (the firmware takes `F` only at an aim it has held
/// `fireSettle`), so it waits in ambush. From the target's walk (a straight
/// line at a steady pace: `StraightWalk`) it picks
/// the earliest point where dart and person can meet (`Intercept`), slews
/// there, stands, and fires when the person's predicted place at the
/// dart's arrival is that point. A person who stops, turns back or whose
/// path is too uncertain is not shot at: the plan is dropped and made again.
///
/// Angles are the wire's (after `--invert-x`/`-y`), degrees; times are the
/// motion's clock (the frames'), with the wire's moment of a frame being its
/// time plus the capture-to-wire latency.
public struct LeadingFire: Sendable {
    /// A shot being prepared.
    public struct Plan: Sendable, Equatable {
        /// Where the turret waits, as sent.
        public var aim: Aim
        /// When `F` should reach the wire.
        public var fireAt: Double
        /// Seconds from `F` to the dart's arrival at this target's range.
        public var arrivalDelay: Double
        /// Set once fired: the aim is held until the dart has left.
        public var firedAt: Double?
    }

    /// Below this speed (degrees per second, about 0.15 m/s at 2.5 m) a target counts as standing: the still aim's rules apply.
    public static let walkingSpeed = 3.5
    /// The farthest ahead a plan looks: beyond it a walker's path is a guess.
    public static let longestLead = 1.2
    /// Seconds more than the firmware's settling the plan allows: the shot goes on a frame, not at any moment.
    static let frameSlack = 0.05
    /// A plan not fired this long after its moment is dropped (the person stopped short).
    public static let patience = 0.4
    /// Seconds a walker who stops stands, beyond a shot's delay, before a still shot goes: longer than a walk's pause.
    public static let pauseLength = 0.75

    public private(set) var motion = StraightWalk()
    /// The target's legs so far: a plan arrives within the shortest.
    public private(set) var legs = WalkLegs()
    public private(set) var plan: Plan?
    private var targetID: Int?
    /// The target's face width in degrees, last seen: its distance.
    private var lastFaceDegrees = 0.0
    /// The newest frame's time at which the target walked; nil: not since it was first seen.
    private var lastWalked: Double?

    public init() {}

    /// What one frame tells about the target.
    public struct Sighting: Sendable {
        /// The fire point's angles (unrounded, the wire's orientation), and the face's width in degrees.
        public var pan: Double
        public var tilt: Double
        public var faceDegrees: Double
        public var time: Double

        public init(pan: Double, tilt: Double, faceDegrees: Double, time: Double) {
            self.pan = pan
            self.tilt = tilt
            self.faceDegrees = faceDegrees
            self.time = time
        }
    }

    /// Takes the frame's sighting of target `id` (nil: not in sight); a new target starts the motion over (a gap does too: `TargetMotion`).
    public mutating func observe(_ sighting: Sighting?, of id: Int?) {
        if id != targetID {
            targetID = id
            motion.reset()
            plan = nil
            lastWalked = nil
            legs.reset()
        }
        guard let sighting else {
            plan = plan?.firedAt == nil ? nil : plan
            return
        }
        motion.add(time: sighting.time, pan: sighting.pan, tilt: sighting.tilt)
        lastFaceDegrees = sighting.faceDegrees
        // One fit of the window for both: the walk now, and its way.
        let estimate = motion.estimate
        let walking = estimate.map { Self.isWalking($0) } ?? false
        if walking { lastWalked = sighting.time }
        let way = estimate.map { $0.panSpeed > 0 ? 1 : -1 } ?? 0
        legs.update(restartedAt: motion.restartedAt, heading: walking ? way : 0)
    }

    /// Whether a still shot may go at the target: it does not walk, and if it
    /// walked since it was first seen, it has stood `pauseLength` beyond the
    /// shot's own delay (`wireNow - time` to the wire, then the trigger and the
    /// flight). A walker's pause (a turn at the end of a walk, a glance back)
    /// ends about when a dart sent into it arrives: on the range, still shots in
    /// half-second pauses missed 30-40 cm behind the person walking on.
    public func isStanding(wireNow: Double, time: Double, lead settings: LeadSettings) -> Bool {
        guard !isWalking else { return false }
        guard let lastWalked else { return true }
        let shotDelay = wireNow - time + settings.arrivalDelay(range: settings.range(faceSpanningDegrees: lastFaceDegrees))
        return time - lastWalked >= shotDelay + Self.pauseLength
    }

    /// The target walks: the lead's rules apply rather than the still aim's.
    public var isWalking: Bool { motion.estimate.map { Self.isWalking($0) } ?? false }

    static func isWalking(_ estimate: StraightWalk.Estimate) -> Bool { estimate.isPanMoving(atLeast: walkingSpeed) }

    /// Forgets the plan (the lock went, the steering changed).
    public mutating func drop() { plan = nil }

    /// The aim this frame while a plan stands or one can be made; nil
    /// leaves the tracker's aim. `wireNow`: this frame's moment on the wire
    /// (its time plus the latency); `turret`: the model at this frame's
    /// time; `mapper`: the angles' limits and which way the tilt points lower;
    /// `cooldownLeft`: seconds before a shot may go.
    public mutating func aim(
        wireNow: Double, turret: TurretModel, servoSecondsPer60Degrees: Double, mapper: AngleMapper,
        lead settings: LeadSettings, cooldownLeft: Double
    ) -> Aim? {
        if let fired = plan?.firedAt {
            // Hold until the dart has left the barrel.
            if wireNow - fired < settings.triggerDelay { return plan?.aim }
            plan = nil
        }
        if plan == nil, isWalking { plan = makePlan(wireNow: wireNow, turret: turret, servoSecondsPer60Degrees: servoSecondsPer60Degrees, mapper: mapper, lead: settings, cooldownLeft: cooldownLeft) }
        return plan?.aim
    }

    /// Whether to send `F` now: the plan's moment has come and the target's
    /// predicted place at the dart's arrival is within `halfWidth` metres of
    /// the aim. A target that passed the point or turned away drops the plan.
    public mutating func isTimeToFire(wireNow: Double, frameInterval: Double, lead settings: LeadSettings) -> Bool {
        guard let plan, plan.firedAt == nil, let estimate = motion.estimate else { return false }
        let range = settings.range(faceSpanningDegrees: lastFaceDegrees)
        let arrival = estimate.position(at: wireNow + plan.arrivalDelay)
        let miss = arrival.pan - Double(plan.aim.pan)
        let tolerance = Self.degrees(metres: Self.halfWidth(settings), at: range)
        // Passed the point (the miss is along the walk and growing), or so late the person stopped short: start over.
        if miss * estimate.panSpeed > 0 && abs(miss) > tolerance || wireNow > plan.fireAt + Self.patience {
            self.plan = nil
            return false
        }
        guard wireNow >= plan.fireAt - frameInterval / 2 else { return false }
        // Fired on time the miss is the frames' spacing at most; a late shot (the turret not ready) is no shot: start over.
        let spread = estimate.uncertainty(leading: plan.arrivalDelay)
        guard abs(miss) + spread <= tolerance / 2, abs(arrival.tilt - Double(plan.aim.tilt)) <= tolerance else {
            if wireNow > plan.fireAt + frameInterval { self.plan = nil }
            return false
        }
        return true
    }

    /// The shot went at `wireNow`.
    public mutating func fired(at wireNow: Double) { plan?.firedAt = wireNow }

    /// A torso's half-width from a face's: shoulders are about 2.7 faces across.
    static func halfWidth(_ settings: LeadSettings) -> Double { 1.3 * settings.faceWidth }

    static func degrees(metres: Double, at range: Double) -> Double { atan2(metres, range) * 180 / .pi }

    /// The pans a plan may wait at: the turret's, and on a fixed camera (`--fov`)
    /// only where the camera still sees the whole torso (`margin` degrees in
    /// from the edges): a walker nearing the edge is about to turn or leave,
    /// and a dart sent where the picture ends meets whoever sentry cannot see.
    static func panLimits(_ mapper: AngleMapper, keepingClear margin: Double) -> Range<Int> {
        var lowest = mapper.range.lowerBound, highest = mapper.range.upperBound
        if let fieldOfView = mapper.fieldOfView {
            lowest = max(lowest, Int((90 - fieldOfView / 2 + margin).rounded(.up)))
            highest = min(highest, Int((90 + fieldOfView / 2 - margin).rounded(.down)))
        }
        return lowest..<max(lowest, highest + 1)
    }

    private func makePlan(
        wireNow: Double, turret: TurretModel, servoSecondsPer60Degrees: Double, mapper: AngleMapper, lead settings: LeadSettings,
        cooldownLeft: Double
    ) -> Plan? {
        guard let estimate = motion.estimate else { return nil }
        let range = settings.range(faceSpanningDegrees: lastFaceDegrees)
        let limits = Self.panLimits(mapper, keepingClear: Self.degrees(metres: Self.halfWidth(settings), at: range))
        let arrivalDelay = settings.arrivalDelay(range: range)
        let now = estimate.position(at: wireNow)
        // The firmware times its settling by its own idea of the servo's speed; the horns move at theirs: the slower governs.
        let servoSpeed = 60 / max(servoSecondsPer60Degrees, ServoController.servoSecondsPer60Degrees, 1e-3)
        let settle = ServoController.fireSettle + FireControl.wireMargin + Self.frameSlack
        // A first aim from the walk's speed now (`Intercept`: a steady turn)…
        let intercept = Intercept(
            target: now.pan, targetSpeed: estimate.panSpeed, turret: turret.pan, servoSpeed: servoSpeed, settle: settle, delay: arrivalDelay)
        guard let shot = intercept.earliest else { return nil }
        // …then whole degrees on the wire along the walk, from the next one, each
        // with the moment the straight walk reaches it, until the turret can be
        // there and settled in time and the cooldown is over.
        let direction = estimate.panSpeed > 0 ? 1.0 : -1.0
        var pan = direction > 0 ? shot.aim.rounded(.up) : shot.aim.rounded(.down)
        func shotAfter(_ pan: Double) -> Double? { estimate.time(reachingPan: pan).map { $0 - wireNow - arrivalDelay } }
        guard var after = shotAfter(pan) else { return nil }
        while after < max(abs(pan - turret.pan) / servoSpeed + settle, cooldownLeft) {
            pan += direction
            guard after <= Self.longestLead, limits.contains(Int(pan)), let later = shotAfter(pan) else { return nil }
            after = later
        }
        guard after <= Self.longestLead, limits.contains(Int(pan)) else { return nil }
        // A walker who has turned or stopped after every leg so far will again: the dart arrives within the shortest leg.
        if let latest = legs.latestArrival, wireNow + after + arrivalDelay > latest { return nil }
        // The predicted place may stray this far: wider than the torso, no shot.
        let uncertainty = estimate.uncertainty(leading: after + arrivalDelay + (wireNow - estimate.time))
        guard uncertainty <= Self.degrees(metres: Self.halfWidth(settings), at: range) else { return nil }
        // The whole degree below the point, not above it: off the face rather than toward it.
        let exactTilt = estimate.position(at: wireNow + after + arrivalDelay).tilt
        let tilt = mapper.invertY ? exactTilt.rounded(.down) : exactTilt.rounded(.up)
        guard mapper.range.contains(Int(tilt)) else { return nil }
        return Plan(aim: Aim(pan: Int(pan), tilt: Int(tilt)), fireAt: wireNow + after, arrivalDelay: arrivalDelay)
    }
}

#if canImport(Glibc)
    import Glibc
#endif
