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
        guard let largestArea = boxes.map(\.area).max() else {
            previous = nil
            return nil
        }
        let largest = boxes.filter { $0.area == largestArea }
        var chosen = largest[0]
        if largest.count > 1, let previous {
            let anchor = previous.center
            func distance(_ box: Box) -> Double {
                let c = box.center
                return (c.x - anchor.x) * (c.x - anchor.x) + (c.y - anchor.y) * (c.y - anchor.y)
            }
            // `min(by:)` keeps the first of equally near boxes.
            chosen = largest.min { distance($0) < distance($1) }!
        }
        previous = chosen
        return chosen
    }
}
