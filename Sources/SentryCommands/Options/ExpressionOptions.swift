import ArgumentParser
import Expressions
import FaceRecognition
import SentryApp

/// Faces read as expressions (`run`): the mesh on the followed face, commands on
/// held expressions, and whom the trigger spares (SPEC §8).
struct ExpressionOptions: ParsableArguments {
    @Flag(inversion: .prefixedNo, help: LiveSetting.expressions.flagHelp)
    var expressions = false

    @Option(help: LiveSetting.expressionsFps.flagHelp)
    var expressionsFps: DetectRate = .perSecond(15)

    @Option(
        help: ArgumentHelp(
            "Run a shell command when an expression is held HOLD seconds (default 0), once until it ends: NAME[:HOLD]=COMMAND, NAME one of \(ExpressionState.allCases.map(\.rawValue).joined(separator: ", ")). Repeatable; SENTRY_EXPRESSION, SENTRY_SCORE and --on-lock's variables in its environment. Turns on --expressions.",
            valueName: "name[:hold]=command"))
    var onExpression: [String] = []

    @Option(
        help: ArgumentHelp(LiveSetting.spare.flagHelp.abstract, valueName: "expression|known|name"))
    var spare: String?

    @Option(
        help: ArgumentHelp(
            "Recognise the target: the household's folder, a folder per person holding their photos (DIR/alice/1.jpg; sentry known DIR checks it). Who the target is goes into the log, the events (person) and the hooks (SENTRY_PERSON). Turns on --expressions.",
            valueName: "dir"))
    var known: String?

    @Option(
        help: ArgumentHelp(
            "Whom to follow when several faces are in view: largest (SPEC §1.3), or unknown: the largest not recognised as one of the household (--known), which is followed only when nobody else is in view.",
            valueName: "largest|unknown"))
    var target: TargetChoice = .largest

    func validate() throws {
        if let known, known.isEmpty { throw ValidationError("--known needs a folder, e.g. --known ~/household") }
        if let spared = sparedPeople, known == nil {
            throw ValidationError(
                spared == .household
                    ? "--spare known holds fire at the household --known enrols: add --known DIR (a folder per person holding their photos)"
                    : "--spare \(spare ?? "") is no expression (\(ExpressionState.allCases.map(\.rawValue).joined(separator: ", "))) and, without --known DIR, no person: add --known with a folder per person holding their photos")
        }
        if target == .unknown, known == nil {
            throw ValidationError("--target unknown follows strangers before the household --known enrols: add --known DIR (a folder per person holding their photos)")
        }
        if let rate = expressionsFps.perSecond { try LiveSetting.expressionsFps.check(rate) }
        do {
            _ = try rules
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// `--target`: whom to follow among several faces.
    enum TargetChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
        case largest, unknown
    }

    /// The `--on-expression` rules.
    var rules: [ExpressionRule] {
        get throws(ExpressionRuleError) { try onExpression.map { text throws(ExpressionRuleError) in try ExpressionRule(parsing: text) } }
    }

    /// `--spare known`: the household, not an expression.
    static let household = "known"

    /// `--spare known` (anyone `--known` enrols) or `--spare NAME` (one of them); nil for an expression or none.
    var sparedPeople: SparedPeople? {
        guard let spare, spare != "none", ExpressionState(rawValue: spare) == nil else { return nil }
        return spare == Self.household ? .household : .person(spare)
    }

    /// The `--spare` expression; nil without it, with `none`, `known` or a name.
    var spareState: ExpressionState? { spare.flatMap(ExpressionState.init(rawValue:)) }

    /// Whether the mesh runs: asked for, or needed by a hook, `--spare` or `--known` (the chip is placed by its points).
    var enabled: Bool { expressions || !onExpression.isEmpty || spareState != nil || known != nil }

    /// The flag that turned the mesh on, as the user typed it.
    var reason: String {
        if expressions { return "--expressions" }
        if let rule = onExpression.first { return "--on-expression \(rule)" }
        if let known, spareState == nil { return "--known \(known)" }
        return "--spare \(spare ?? "")"
    }
}
