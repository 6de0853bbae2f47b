/// Flies each shot and says where it landed: the dart leaves `triggerDelay`
/// after `F` reached the turret, along the way the horns point at that
/// moment, at `muzzleSpeed`, in a straight line (a foam dart's drop over
/// 3 m is left to the calibration of `--fire-below`), and meets whoever it
/// reaches first, where that person is when it arrives.
public struct RangeJudge: Sendable {
    /// A shot as the turret took it: when `F` arrived, on the range's clock.
    public struct Shot: Sendable, Equatable {
        public var time: Double

        public init(time: Double) { self.time = time }
    }

    /// What became of a shot.
    public struct Outcome: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable {
            /// On a torso (shoulders to hips).
            case hit
            /// On a face (its box and a margin): what `--fire-below` and the face rule exist to prevent.
            case face
            /// Anywhere else: beside the person, or on the neck, the legs.
            case miss
        }
        public var kind: Kind
        /// When `F` arrived, and when the dart reached the nearest person's depth.
        public var time: Double
        public var arrival: Double
        /// Metres from the nearest person's torso centre line, across and up
        /// (negative: left of it, below it), at that person's depth.
        public var across: Double
        public var up: Double
    }

    public var world: RangeWorld
    public var triggerDelay: Double
    public var muzzleSpeed: Double

    public init(world: RangeWorld, triggerDelay: Double, muzzleSpeed: Double) {
        precondition(triggerDelay >= 0 && muzzleSpeed > 0)
        self.world = world
        self.triggerDelay = triggerDelay
        self.muzzleSpeed = muzzleSpeed
    }

    /// The outcome of `shot` among `people`, with `horns` giving where the turret points at a time.
    public func judge(_ shot: Shot, people: [RangePerson], horns: (Double) -> (pan: Double, tilt: Double)) -> Outcome {
        let release = shot.time + triggerDelay
        let (pan, tilt) = horns(release)
        let outcomes = people.map { person -> (outcome: Outcome, depth: Double) in
            // The dart's flight to the person's depth, which moves while it flies: a few rounds settle it.
            var arrival = release, place = person.position(at: release)
            for _ in 0..<4 {
                let point = world.dartPoint(pan: pan, tilt: tilt, depth: place.z)
                let rise = point.y - world.turretHeight
                arrival = release + (point.x * point.x + place.z * place.z + rise * rise).squareRoot() / muzzleSpeed
                place = person.position(at: arrival)
            }
            let point = world.dartPoint(pan: pan, tilt: tilt, depth: place.z)
            let across = point.x - place.x, below = world.faceHeight - point.y
            let kind: Outcome.Kind =
                if abs(across) <= world.faceZoneHalfSize && abs(below) <= world.faceZoneHalfSize { .face }
                else if abs(across) <= world.torsoHalfWidth && below >= world.shoulderDrop && below <= world.hipDrop { .hit }
                else { .miss }
            let torsoMiddle = (world.shoulderDrop + world.hipDrop) / 2
            return (Outcome(kind: kind, time: shot.time, arrival: arrival, across: across, up: torsoMiddle - below), place.z)
        }
        // The first body on the dart's way stops it; a dart that meets nobody is measured from the person it passed closest.
        if let struck = outcomes.filter({ $0.outcome.kind != .miss }).min(by: { $0.depth < $1.depth }) { return struck.outcome }
        return outcomes.min { abs($0.outcome.across) < abs($1.outcome.across) }!.outcome
    }
}
