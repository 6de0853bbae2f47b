/// How long a walker keeps one way before they stop or turn: the legs
/// between a walk's changes (`StraightWalk.restartedAt`) on which they
/// walked. A dart that arrives later into the present leg than the shortest
/// leg seen bets against a turn that has come every time so far.
public struct WalkLegs: Sendable, Equatable {
    /// The latest walked legs' lengths in seconds, newest last.
    public private(set) var lengths: [Double] = []
    /// When the present leg began; nil before the walk's first change (its start was not seen).
    public private(set) var currentStart: Double?
    /// The present leg's way: -1 or 1 along the pan, 0 standing.
    private var heading = 0
    /// The present leg began where the way changed from a leg seen whole, not at the first change seen
    /// (which may be a change of pace: the way before it is unknown).
    private var startedAtTurn = false
    private var lastRestart: Double?
    /// Legs kept: a walker's rhythm is their latest few legs, not the whole visit.
    static let kept = 3
    /// Legs needed before they say anything: one may be a turn at a wall.
    static let needed = 2

    public init() {}

    /// Takes a frame's state of the walk: when it last changed, and which way
    /// the target walks now (-1 or 1 along the pan, 0 standing), read at the
    /// change from the samples after it. A change that keeps the way (a step
    /// quicker or slower) is no end of a leg.
    public mutating func update(restartedAt: Double?, heading now: Int) {
        guard let restart = restartedAt, restart != lastRestart else { return }
        lastRestart = restart
        guard now != heading || currentStart == nil else { return }
        if let start = currentStart, heading != 0, startedAtTurn {
            lengths.append(restart - start)
            if lengths.count > Self.kept { lengths.removeFirst() }
        }
        startedAtTurn = currentStart != nil
        currentStart = restart
        heading = now
    }

    /// Forgets the legs: another target.
    public mutating func reset() { self = WalkLegs() }

    /// The latest moment a dart should arrive in the present leg: its start
    /// plus the shortest leg seen; nil until `needed` legs are known.
    public var latestArrival: Double? {
        guard lengths.count >= Self.needed, let currentStart, let shortest = lengths.min() else { return nil }
        return currentStart + shortest
    }
}
