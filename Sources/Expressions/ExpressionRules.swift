extension ExpressionState {
    /// The score a state is read from (`SENTRY_SCORE` of its hooks): both sides'
    /// mean for the smile, the weaker eye for a blink.
    public func score(in scores: ExpressionScores) -> Float {
        switch self {
        case .smile: (scores.mouthSmileLeft + scores.mouthSmileRight) / 2
        case .blink: min(scores.eyeBlinkLeft, scores.eyeBlinkRight)
        case .winkLeft: scores.eyeBlinkLeft
        case .winkRight: scores.eyeBlinkRight
        case .mouthOpen: scores.jawOpen
        }
    }

    /// How the mode line says a target shows it (`Spared — smiling`).
    public var participle: String {
        switch self {
        case .smile: "smiling"
        case .blink: "blinking"
        case .winkLeft, .winkRight: "winking"
        case .mouthOpen: "mouth open"
        }
    }

    /// The state `name` names (`smile`, `wink-left`…), or a one-line reason listing the names.
    public static func named(_ name: String, flag: String) throws(ExpressionRuleError) -> ExpressionState {
        guard let state = ExpressionState(rawValue: name) else {
            throw ExpressionRuleError(
                "\(flag) \(name.isEmpty ? "''" : name) is not an expression; use one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return state
    }
}

/// An expression flag that cannot be used; one line with the fix.
public struct ExpressionRuleError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// `--on-expression NAME[:HOLD]=CMD`: a shell command for a state held `hold`
/// seconds (`smile:2=./ring-doorbell.sh`).
public struct ExpressionRule: Sendable, Equatable {
    public var state: ExpressionState
    public var hold: Double
    public var command: String

    public init(state: ExpressionState, hold: Double = 0, command: String) {
        (self.state, self.hold, self.command) = (state, hold, command)
    }

    /// The longest hold taken: an hour, as `--lock-after`.
    public static let longestHold = 3600.0

    /// Reads `NAME[:HOLD]=CMD`; the first `=` ends the name, so the command may hold more.
    public init(parsing text: String) throws(ExpressionRuleError) {
        let example = "e.g. --on-expression smile:2=./ring-doorbell.sh"
        guard let equals = text.firstIndex(of: "=") else {
            throw ExpressionRuleError("--on-expression \(text) needs NAME[:HOLD]=COMMAND, \(example)")
        }
        let head = text[..<equals], command = String(text[text.index(after: equals)...])
        guard !command.allSatisfy(\.isWhitespace) else {
            throw ExpressionRuleError("--on-expression \(text) has no command after '=', \(example)")
        }
        let parts = head.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let state = try ExpressionState.named(String(parts[0]), flag: "--on-expression")
        var hold = 0.0
        if parts.count == 2 {
            guard let seconds = Double(parts[1]), seconds.isFinite, (0...Self.longestHold).contains(seconds) else {
                throw ExpressionRuleError(
                    "--on-expression \(head): the hold '\(parts[1])' must be seconds from 0 to \(Int(Self.longestHold)), \(example)")
            }
            hold = seconds
        }
        self.init(state: state, hold: hold, command: command)
    }
}

/// Which rules are due: a rule runs once when its state has been on for its
/// hold, and is re-armed only when the state ends (a smile held a minute rings
/// the doorbell once, a shorter one never).
public struct ExpressionTriggers: Sendable {
    public let rules: [ExpressionRule]
    /// Per rule: since when its state has been on, and whether it ran in this showing.
    private var since: [Double?]
    private var ran: [Bool]

    public init(rules: [ExpressionRule]) {
        self.rules = rules
        since = rules.map { _ in nil }
        ran = rules.map { _ in false }
    }

    /// Takes the states at `time` and calls `due` with the index and the rule of each
    /// rule whose hold was just reached. No face: pass no states, which ends every showing.
    public mutating func update(_ active: Set<ExpressionState>, at time: Double, due: (Int, ExpressionRule) -> Void) {
        for index in rules.indices {
            guard active.contains(rules[index].state) else {
                (since[index], ran[index]) = (nil, false)
                continue
            }
            let start = since[index] ?? time
            since[index] = start
            if !ran[index], time - start >= rules[index].hold {
                ran[index] = true
                due(index, rules[index])
            }
        }
    }
}
