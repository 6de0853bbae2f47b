/// Degrees added to every angle sent to each servo: the software form of
/// re-seating a horn a tooth off. The host aims, de-duplicates and draws in
/// untrimmed degrees; only the bytes on the wire carry the trim, so the
/// console, the fire point and the lock see the mapping of SPEC §2 unchanged.
/// The sketch's own sweep (`L`, 20-160°) is not trimmed: the board runs it.
public struct ServoTrim: Hashable, Sendable {
    /// At most a few spline teeth: a turret further off needs its horn moved.
    public static let range = -30...30

    public var pan: Int
    public var tilt: Int

    public init(pan: Int = 0, tilt: Int = 0) {
        precondition(Self.range.contains(pan) && Self.range.contains(tilt), "trim outside \(Self.range)")
        self.pan = pan
        self.tilt = tilt
    }

    /// `command` as the servo must receive it, within the protocol's 0-180°.
    /// A shot confirms the pan angle the servo holds, so it is trimmed as `X` is.
    public func applied(to command: Command) -> Command {
        func trimmed(_ angle: Int, by degrees: Int) -> Int { min(max(angle + degrees, 0), Command.maxAngle) }
        switch command {
        case .pan(let angle): return .pan(trimmed(angle, by: pan))
        case .tilt(let angle): return .tilt(trimmed(angle, by: tilt))
        case .fire(let angle): return .fire(trimmed(angle, by: pan))
        case .lost: return .lost
        }
    }
}
