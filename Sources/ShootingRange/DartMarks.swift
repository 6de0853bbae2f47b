/// Where the last darts landed on the range, for the console to draw over
/// the picture (never into it: the detector would see the marks). Each shows
/// for `seconds` from the dart's arrival, at the pixel of the way it flew.
public struct DartMarks: Sendable {
    /// Seconds a mark shows, and how many are kept.
    public static let seconds = 2.0
    static let kept = 4

    public let world: RangeWorld
    private var landings: [(arrival: Double, x: Double, y: Double, hit: Bool)] = []

    public init(world: RangeWorld) { self.world = world }

    /// A dart flew along `pan`, `tilt` and met `outcome` (`RangeJudge`).
    public mutating func landed(_ outcome: RangeJudge.Outcome, pan: Double, tilt: Double) {
        let point = world.pixel(pan: pan, tilt: tilt)
        landings.append((outcome.arrival, point.x, point.y, outcome.kind == .hit))
        if landings.count > Self.kept { landings.removeFirst() }
    }

    /// The marks a picture of the range at `time` shows: frame pixels, and whether the dart struck a torso.
    public func marks(at time: Double) -> [(x: Double, y: Double, hit: Bool)] {
        landings.filter { $0.arrival <= time && time < $0.arrival + Self.seconds }.map { ($0.x, $0.y, $0.hit) }
    }
}
