#if canImport(Glibc)
    import Glibc
#endif

/// A person walking a straight line at a steady pace, as the turret sees
/// them: what is steady is their place across the view per metre of their
/// distance, `tan(angle − 90°)`, not the angle. Crossing 2.5 m away at 2 m/s,
/// the pan turns 46° a second straight ahead and 35° at a 60° view's edge
/// (cos² 30° = 0.75): a line fitted to the angle, carried half a second on,
/// falls behind a walker coming to the middle and runs ahead of one going to
/// the edge. So the line (`TargetMotion`'s) is fitted along `tan(angle − 90°)`
/// on both axes (the tilt's: height per metre of distance) and read back in
/// degrees. Angles are the turret's (SPEC §2: 90 straight ahead).
public struct StraightWalk: Sendable {
    /// A stop, a start or a turn restarts the line once five frames (a sixth of a second) show it,
    /// at a change of 3.5°/s or more straight ahead (`TargetMotion.breakAt`).
    private var line = TargetMotion(breakAt: (samples: 5, speedChange: 3.5 * .pi / 180))

    public init() {}

    /// Adds a frame's angles (see `TargetMotion.add`).
    public mutating func add(time: Double, pan: Double, tilt: Double) {
        line.add(TargetMotion.Sample(time: time, pan: Self.across(pan), tilt: Self.across(tilt)))
    }

    /// Forgets every sample: another face, or the same one after a gap.
    public mutating func reset() { line.reset() }

    /// When the walk last changed (a stop, a start, a turn); nil without a change since the track began.
    public var restartedAt: Double? { line.restartedAt }

    /// How many samples the window holds now.
    public var sampleCount: Int { line.recent.count }

    /// The walk now, or nil with too few samples.
    public var estimate: Estimate? { line.estimate.map(Estimate.init) }

    /// The walk over the window, in degrees.
    public struct Estimate: Sendable, Equatable {
        /// The line along `tan(angle − 90°)`.
        let line: TargetMotion.Estimate

        /// The newest sample's time.
        public var time: Double { line.time }

        /// Where the walk puts the face at `time`.
        public func position(at time: Double) -> (pan: Double, tilt: Double) {
            let place = line.position(at: time)
            return (StraightWalk.angle(place.pan), StraightWalk.angle(place.tilt))
        }

        /// Degrees per second at the newest sample.
        public var panSpeed: Double { line.panSpeed * StraightWalk.degreesPerUnit(at: line.pan) }
        public var tiltSpeed: Double { line.tiltSpeed * StraightWalk.degreesPerUnit(at: line.tilt) }

        /// The pan turns at `speed` degrees per second or faster, and the walk's
        /// speed stands three times clear of its own error: jitter is no walk.
        public func isPanMoving(atLeast speed: Double) -> Bool {
            abs(panSpeed) >= speed && abs(line.panSpeed) >= 3 * line.speedError
        }

        /// How far off (degrees) a position predicted `lead` seconds ahead may be
        /// (`TargetMotion.Estimate.uncertainty`, in degrees where the face is now).
        public func uncertainty(leading lead: Double) -> Double {
            line.uncertainty(leading: lead) * StraightWalk.degreesPerUnit(at: line.pan)
        }

        /// When the walk's pan reaches `pan`, or nil when it does not move.
        public func time(reachingPan pan: Double) -> Double? {
            guard line.panSpeed != 0 else { return nil }
            return line.time + (StraightWalk.across(pan) - line.pan) / line.panSpeed
        }
    }

    /// `tan(angle − 90°)`, the angle kept a degree inside 0-180 (straight sideways is no place ahead).
    static func across(_ angle: Double) -> Double { tan((min(max(angle, 1), 179) - 90) * .pi / 180) }

    static func angle(_ across: Double) -> Double { 90 + atan(across) * 180 / .pi }

    /// Degrees of angle per unit of `tan(angle − 90°)` at `across`.
    static func degreesPerUnit(at across: Double) -> Double { 180 / .pi / (1 + across * across) }
}
