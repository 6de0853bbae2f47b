/// A walk on the range: the face's place on the floor (metres; the turret
/// at the origin, `x` to its right, `z` straight ahead) through a list of
/// waypoints, walked in straight lines at the speeds the times give, and
/// from the last back to the first again, for ever.
public struct RangePath: Sendable {
    public struct Waypoint: Sendable {
        /// Seconds since the walk began.
        public var time: Double
        public var x: Double
        public var z: Double

        public init(_ time: Double, x: Double, z: Double) {
            self.time = time
            self.x = x
            self.z = z
        }
    }

    /// In time order; the last one's time is the walk's period.
    public let waypoints: [Waypoint]

    public init(_ waypoints: [Waypoint]) {
        precondition(!waypoints.isEmpty && waypoints.first!.time == 0)
        precondition(zip(waypoints, waypoints.dropFirst()).allSatisfy { $0.time <= $1.time })
        self.waypoints = waypoints
    }

    /// Standing at one spot.
    public static func standing(x: Double, z: Double) -> RangePath { RangePath([Waypoint(0, x: x, z: z)]) }

    /// Where the face is at `time`.
    public func position(at time: Double) -> (x: Double, z: Double) {
        guard let period = waypoints.last?.time, period > 0 else { return (waypoints[0].x, waypoints[0].z) }
        let t = time.truncatingRemainder(dividingBy: period) + (time < 0 ? period : 0)
        let next = waypoints.firstIndex { $0.time > t } ?? waypoints.count - 1
        let a = waypoints[max(next - 1, 0)], b = waypoints[next]
        let share = b.time > a.time ? (t - a.time) / (b.time - a.time) : 1
        return (a.x + (b.x - a.x) * share, a.z + (b.z - a.z) * share)
    }

    /// Walking speed at `time`, metres per second (a small step's difference).
    public func speed(at time: Double) -> Double {
        let step = 1e-3
        let a = position(at: time), b = position(at: time + step)
        return ((b.x - a.x) * (b.x - a.x) + (b.z - a.z) * (b.z - a.z)).squareRoot() / step
    }

    /// Back and forth between `x = -halfWidth` and `halfWidth` at depth `z`,
    /// `speed` m/s, pausing `pause` seconds at each end (a person turning).
    public static func pacing(halfWidth: Double, z: Double, speed: Double, pause: Double, startingRight: Bool = false) -> RangePath {
        let leg = 2 * halfWidth / speed
        let from = startingRight ? halfWidth : -halfWidth
        return RangePath([
            Waypoint(0, x: from, z: z), Waypoint(pause, x: from, z: z), Waypoint(pause + leg, x: -from, z: z),
            Waypoint(2 * pause + leg, x: -from, z: z), Waypoint(2 * pause + 2 * leg, x: from, z: z),
        ])
    }
}

/// Someone on the range.
public struct RangePerson: Sendable {
    public var path: RangePath
    /// Seconds the walk is ahead of the range's clock (people out of step).
    public var startOffset: Double

    public init(path: RangePath, startOffset: Double = 0) {
        self.path = path
        self.startOffset = startOffset
    }

    public func position(at time: Double) -> (x: Double, z: Double) { path.position(at: time + startOffset) }
}

/// One exercise on the range: who walks where, for how long.
public struct RangeScenario: Sendable {
    public var name: String
    /// What happens, for the table.
    public var summary: String
    /// The walking speed, metres per second (0: standing), for the table.
    public var speed: Double
    public var people: [RangePerson]
    /// Seconds the exercise runs.
    public var duration: Double

    public init(name: String, summary: String, speed: Double, people: [RangePerson], duration: Double) {
        precondition(!people.isEmpty && duration > 0)
        self.name = name
        self.summary = summary
        self.speed = speed
        self.people = people
        self.duration = duration
    }

    /// The exercises `sentry range` runs, people 2–3 m from the turret:
    /// within the 60° camera's view they have about ±1.4 m to walk.
    public static let all: [RangeScenario] = [
        RangeScenario(
            name: "standing", summary: "stands still, 2.5 m away", speed: 0,
            people: [RangePerson(path: .standing(x: 0.3, z: 2.5))], duration: 12),
        RangeScenario(
            name: "crossing-1", summary: "crosses left and right at 1 m/s, 2.5 m away", speed: 1,
            people: [RangePerson(path: .pacing(halfWidth: 1.3, z: 2.5, speed: 1, pause: 0.5))], duration: 20),
        RangeScenario(
            name: "crossing-2", summary: "crosses left and right at 2 m/s, 2.5 m away", speed: 2,
            people: [RangePerson(path: .pacing(halfWidth: 1.3, z: 2.5, speed: 2, pause: 0.5))], duration: 20),
        RangeScenario(
            name: "stop-and-go", summary: "walks 1 m/s for 1.2 s, stands 1 s, on across", speed: 1,
            people: [RangePerson(path: RangePath([
                .init(0, x: -1.1, z: 2.5), .init(1.0, x: -1.1, z: 2.5), .init(2.2, x: 0.1, z: 2.5), .init(3.2, x: 0.1, z: 2.5),
                .init(4.2, x: 1.1, z: 2.5), .init(5.2, x: 1.1, z: 2.5), .init(6.4, x: -0.1, z: 2.5), .init(7.4, x: -0.1, z: 2.5),
                .init(8.4, x: -1.1, z: 2.5),
            ]))], duration: 20),
        RangeScenario(
            name: "reversing", summary: "walks 1 m/s, turning back every 0.8–1.4 s without a pause", speed: 1,
            people: [RangePerson(path: RangePath([
                .init(0, x: -0.6, z: 2.5), .init(1.4, x: 0.8, z: 2.5), .init(2.2, x: 0.0, z: 2.5), .init(3.2, x: 1.0, z: 2.5),
                .init(4.4, x: -0.2, z: 2.5), .init(5.2, x: 0.6, z: 2.5), .init(6.4, x: -0.6, z: 2.5),
            ]))], duration: 20),
        RangeScenario(
            name: "toward-away", summary: "walks toward the turret and away, 3.0 m to 2.0 m, at 1 m/s", speed: 1,
            people: [RangePerson(path: RangePath([
                .init(0, x: -0.4, z: 3.0), .init(0.5, x: -0.4, z: 3.0), .init(1.5, x: -0.2, z: 2.0), .init(2.0, x: -0.2, z: 2.0),
                .init(3.0, x: -0.4, z: 3.0),
            ]))], duration: 20),
        RangeScenario(
            name: "two-crossing", summary: "two people cross each other at 1 m/s, 2.2 m and 3.0 m away", speed: 1,
            people: [
                RangePerson(path: .pacing(halfWidth: 1.0, z: 2.2, speed: 1, pause: 0.5)),
                RangePerson(path: .pacing(halfWidth: 1.0, z: 3.0, speed: 1, pause: 0.5, startingRight: true)),
            ], duration: 20),
    ]

    /// The scenario called `name`.
    public static func named(_ name: String) -> RangeScenario? { all.first { $0.name == name } }

    /// The same exercise with every walk begun `seconds` in: the shots fall
    /// at other moments of the walk, so several turns measure a policy, not
    /// one run's luck.
    public func startingLater(by seconds: Double) -> RangeScenario {
        var later = self
        later.people = people.map { RangePerson(path: $0.path, startOffset: $0.startOffset + seconds) }
        return later
    }
}
