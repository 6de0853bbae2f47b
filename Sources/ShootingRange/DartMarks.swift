/// Where the last darts landed on the range, for the console to draw over
/// the picture (never into it: the detector would see the marks). Each shows
/// for `seconds` from the dart's arrival, at the pixel of the way it flew.
public struct DartMarks: Sendable {
    /// One dart's mark: frame pixels, and whether it struck a torso.
    public struct Mark: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public var hit: Bool

        public init(x: Double, y: Double, hit: Bool) {
            self.x = x
            self.y = y
            self.hit = hit
        }
    }

    /// Seconds a mark shows, and how many are kept.
    public static let seconds = 2.0
    static let kept = 4

    public let world: RangeWorld
    private var landings: [(arrival: Double, mark: Mark)] = []

    public init(world: RangeWorld) { self.world = world }

    /// A dart flew along `pan`, `tilt` and met `outcome` (`RangeJudge`).
    public mutating func landed(_ outcome: RangeJudge.Outcome, pan: Double, tilt: Double) {
        let point = world.pixel(pan: pan, tilt: tilt)
        landings.append((outcome.arrival, Mark(x: point.x, y: point.y, hit: outcome.kind == .hit)))
        if landings.count > Self.kept { landings.removeFirst() }
    }

    /// The marks a picture of the range at `time` shows.
    public func marks(at time: Double) -> [Mark] {
        landings.filter { $0.arrival <= time && time < $0.arrival + Self.seconds }.map(\.mark)
    }
}
