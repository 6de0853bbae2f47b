/// A whole-degree output that changes only when the unrounded angle clearly
/// leaves the current degree: `slack` degrees of hysteresis on each side stop
/// a value sitting on a boundary from flipping the servo back and forth.
public struct SteadyDegree: Sendable, Equatable {
    public var slack: Double
    private var current: Int?

    /// A third of a degree: two pixels of a 640-pixel frame on the default
    /// 100° mapping, more than a still face's detector noise, less than a
    /// frame's movement of a face that walks.
    public static let standardSlack = 0.3

    public init(slack: Double = standardSlack) {
        self.slack = slack
    }

    /// `unrounded` → a whole degree by `round` (e.g. truncation toward zero
    /// for SPEC §2), kept at the current degree while within the slack.
    public mutating func degree(for unrounded: Double, rounding: FloatingPointRoundingRule) -> Int {
        let candidate = Int(unrounded.rounded(rounding))
        if let current, candidate != current {
            // The interval that rounds to `current`, widened by the slack.
            let low: Double, high: Double
            switch rounding {
            case .towardZero, .down: (low, high) = (Double(current), Double(current) + 1)
            case .up: (low, high) = (Double(current) - 1, Double(current))
            default: (low, high) = (Double(current) - 0.5, Double(current) + 0.5)
            }
            if unrounded >= low - slack && unrounded < high + slack { return current }
        }
        current = candidate
        return candidate
    }

    public mutating func reset() {
        current = nil
    }
}
