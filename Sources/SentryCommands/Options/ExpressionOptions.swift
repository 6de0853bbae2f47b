import ArgumentParser
import Expressions
import SentryApp

/// Faces read as expressions (`run`): the mesh on the followed face, commands on
/// held expressions, and whom the trigger spares (SPEC §8).
struct ExpressionOptions: ParsableArguments {
    @Flag(
        inversion: .prefixedNo,
        help:
            "Read the followed face's expression, head pose and gaze every frame (the face mesh, which also follows the face between full detections). BlazeFace only."
    )
    var expressions = false

    @Option(
        help:
            "With --expressions: face mesh runs per second of video; between them the face holds its box and reading. 'every': every frame (smoother aim, about twice the CPU)."
    )
    var expressionsFps: DetectRate = .perSecond(15)

    @Option(
        help: ArgumentHelp(
            "Run a shell command when an expression is held HOLD seconds (default 0), once until it ends: NAME[:HOLD]=COMMAND, NAME one of \(ExpressionState.allCases.map(\.rawValue).joined(separator: ", ")). Repeatable; SENTRY_EXPRESSION, SENTRY_SCORE and --on-lock's variables in its environment. Turns on --expressions.",
            valueName: "name[:hold]=command"))
    var onExpression: [String] = []

    @Option(
        help: ArgumentHelp(
            "Never fire at a target showing this expression (e.g. smile); the status says 'Spared — smiling'. 'none': spare nobody. Turns on --expressions.",
            valueName: "expression"))
    var spare: String?

    func validate() throws {
        if let rate = expressionsFps.perSecond, !(rate.isFinite && (1...240).contains(rate)) {
            throw ValidationError("--expressions-fps \(expressionsFps) must be between 1 and 240 mesh runs a second, or 'every'")
        }
        do {
            _ = try rules
            _ = try spareState
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The `--on-expression` rules.
    var rules: [ExpressionRule] {
        get throws(ExpressionRuleError) { try onExpression.map { text throws(ExpressionRuleError) in try ExpressionRule(parsing: text) } }
    }

    /// The `--spare` state; nil without it or with `none`.
    var spareState: ExpressionState? {
        get throws(ExpressionRuleError) {
            guard let spare, spare != "none" else { return nil }
            return try ExpressionState.named(spare, flag: "--spare")
        }
    }

    /// Whether the mesh runs: asked for, or needed by a hook or `--spare`.
    var enabled: Bool { expressions || !onExpression.isEmpty || (try? spareState) != nil }
}
