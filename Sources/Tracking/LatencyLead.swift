import Geometry
import Motion

/// Unarmed, a walker's aim where the person is when the command reaches
/// the turret, not where the picture showed them (`--lead`): the frame is
/// some 0.1 s old by then (exposure, transfer, detection), 10 cm of a walk.
/// A standing face, or one whose walk is not yet known, keeps the tracker's
/// aim; the lead is the walk's line carried over the latency, the line
/// restarted at a stop, a start or a turn (`TargetMotion.breakAt`): fitted
/// across one, it led a stopped walker on past where they stood.
public struct LatencyLead: Sendable {
    /// Restarted once five frames show a change of the walk's speed of 3.5°/s or more (`LeadingFire.walkingSpeed`).
    public private(set) var motion = TargetMotion(breakAt: (samples: 5, speedChange: LeadingFire.walkingSpeed))
    private var targetID: Int?
    private var steadyPan = SteadyDegree()
    private var steadyTilt = SteadyDegree()

    public init() {}

    /// Takes the frame's exact angles of target `id`'s aim point (before mirroring);
    /// another target starts over (a gap does too: `TargetMotion`).
    public mutating func observe(pan: Double, tilt: Double, of id: Int?, at time: Double) {
        if id != targetID {
            targetID = id
            forget()
        }
        motion.add(TargetMotion.Sample(time: time, pan: pan, tilt: tilt))
    }

    /// Starts over: another target, or none.
    public mutating func forget() {
        motion.reset()
        steadyPan.reset()
        steadyTilt.reset()
    }

    /// The aim `latency` seconds past the newest sight (mirrored by `mapper`),
    /// or nil while the target is not walking.
    public mutating func aim(latency: Double, mapper: AngleMapper, slack: Double) -> Aim? {
        guard let estimate = motion.estimate, estimate.isPanMoving(atLeast: LeadingFire.walkingSpeed) else {
            steadyPan.reset()
            steadyTilt.reset()
            return nil
        }
        let place = estimate.position(at: estimate.time + latency)
        let range = mapper.range
        steadyPan.slack = slack
        steadyTilt.slack = slack
        func clamp(_ angle: Double) -> Double { min(max(angle, Double(range.lowerBound)), Double(range.upperBound)) }
        // To the nearest degree: a predicted place is sentry's own, not SPEC §2's formula, and
        // truncating it would put the turret half a degree behind the walker on average.
        let pan = steadyPan.degree(for: clamp(place.pan), rounding: .toNearestOrAwayFromZero)
        let tilt = steadyTilt.degree(for: clamp(place.tilt), rounding: .toNearestOrAwayFromZero)
        return Aim(pan: mapper.invertX ? 180 - pan : pan, tilt: mapper.invertY ? 180 - tilt : tilt)
    }
}
