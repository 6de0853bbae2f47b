/// What a face is doing, as the rules and hooks name it (SPEC §8).
public enum ExpressionState: String, Sendable, CaseIterable, Codable {
    case smile
    /// Both eyes closed.
    case blink
    /// The subject's left eye closed, the right one open: never part of a blink.
    case winkLeft = "wink-left"
    case winkRight = "wink-right"
    case mouthOpen = "mouth-open"
}

/// Turns scores into states with hysteresis: a state turns on above its `on`
/// threshold and off only below its lower `off` one, so a score wavering at
/// one threshold does not make it flicker. A wink must hold `winkSeconds`
/// with the other eye open before it counts, because the two eyes of a blink
/// do not close on the same frame and a blink would otherwise start as a wink.
public struct ExpressionStates: Sendable {
    public static let on: Float = 0.6
    public static let off: Float = 0.4
    /// The other eye's score below which it counts as open during a wink.
    public static let openEye: Float = 0.35
    public static let winkSeconds = 0.15

    public private(set) var active: Set<ExpressionState> = []
    private var winkSince: [ExpressionState: Double] = [:]

    public init() {}

    /// The states after a new set of scores at `time` (seconds on any steady clock).
    @discardableResult
    public mutating func update(_ scores: ExpressionScores, at time: Double) -> Set<ExpressionState> {
        func hold(_ state: ExpressionState, _ score: Float) {
            if score >= Self.on {
                active.insert(state)
            } else if score < Self.off {
                active.remove(state)
            }
        }
        hold(.smile, (scores.mouthSmileLeft + scores.mouthSmileRight) / 2)
        hold(.mouthOpen, scores.jawOpen)
        hold(.blink, min(scores.eyeBlinkLeft, scores.eyeBlinkRight))
        let blinking = active.contains(.blink) || min(scores.eyeBlinkLeft, scores.eyeBlinkRight) >= Self.off
        wink(.winkLeft, closed: scores.eyeBlinkLeft, other: scores.eyeBlinkRight, blinking: blinking, at: time)
        wink(.winkRight, closed: scores.eyeBlinkRight, other: scores.eyeBlinkLeft, blinking: blinking, at: time)
        return active
    }

    private mutating func wink(_ state: ExpressionState, closed: Float, other: Float, blinking: Bool, at time: Double) {
        if blinking || other >= Self.openEye || closed < Self.off {
            active.remove(state)
            winkSince[state] = nil
            return
        }
        guard closed >= Self.on || active.contains(state) else {
            winkSince[state] = nil
            return
        }
        let since = winkSince[state] ?? time
        winkSince[state] = since
        if time - since >= Self.winkSeconds { active.insert(state) }
    }
}
