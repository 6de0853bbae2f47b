import Geometry

/// Picks the face to aim at (SPEC §1.3): the largest box; among equally large
/// boxes the one whose centre is nearest the previous target's centre; then
/// the first one.
public struct TargetSelector: Sendable {
    /// The target chosen last time, if any.
    public private(set) var previous: Box?

    public init() {}

    /// Chooses a target among `boxes` and remembers it. Returns `nil` (and
    /// forgets the previous target) when there are no boxes.
    public mutating func select(from boxes: [Box]) -> Box? {
        let chosen = Self.largest(of: boxes, nearest: previous).map { boxes[$0] }
        previous = chosen
        return chosen
    }

    /// The index of the SPEC §1.3 choice among `boxes`: largest area, then
    /// nearest `anchor`'s centre, then first; `nil` for no boxes.
    public static func largest(of boxes: [Box], nearest anchor: Box?) -> Int? {
        guard let largestArea = boxes.map(\.area).max() else { return nil }
        let candidates = boxes.indices.filter { boxes[$0].area == largestArea }
        guard candidates.count > 1, let anchor else { return candidates[0] }
        let a = anchor.center
        func distance(_ index: Int) -> Double {
            let c = boxes[index].center
            return (c.x - a.x) * (c.x - a.x) + (c.y - a.y) * (c.y - a.y)
        }
        // `min(by:)` keeps the first of equally near boxes.
        return candidates.min { distance($0) < distance($1) }
    }
}
