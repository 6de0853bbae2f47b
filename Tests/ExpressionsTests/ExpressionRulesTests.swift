import Expressions
import Testing

@Suite("--on-expression and --spare: what they accept and when a rule runs")
struct ExpressionRulesTests {
    @Test("NAME[:HOLD]=CMD: the first '=' ends the name, the hold defaults to 0")
    func parsing() throws {
        #expect(try ExpressionRule(parsing: "smile:2=./ring-doorbell.sh") == ExpressionRule(state: .smile, hold: 2, command: "./ring-doorbell.sh"))
        #expect(try ExpressionRule(parsing: "wink-left=echo a=b") == ExpressionRule(state: .winkLeft, hold: 0, command: "echo a=b"))
        #expect(try ExpressionRule(parsing: "mouth-open:0.5=x").hold == 0.5)
    }

    @Test(
        "bad rules are refused in one line that names the fix",
        arguments: [
            ("frown:2=x", "is not an expression; use one of smile, blink, wink-left, wink-right, mouth-open"),
            ("smile:-1=x", "the hold '-1' must be seconds from 0 to 3600"),
            ("smile:soon=x", "the hold 'soon' must be seconds"),
            ("smile:=x", "the hold '' must be seconds"),
            ("smile:nan=x", "the hold 'nan' must be seconds"),
            ("smile:2", "needs NAME[:HOLD]=COMMAND"),
            ("smile:2=  ", "has no command after '='"),
            ("=x", "'' is not an expression"),
        ])
    func refused(text: String, reason: String) {
        #expect {
            try ExpressionRule(parsing: text)
        } throws: { error in
            let description = "\(error)"
            return description.contains(reason) && !description.contains("\n") && description.hasPrefix("--on-expression")
        }
    }

    @Test("--spare names a state or is refused")
    func spare() throws {
        #expect(try ExpressionState.named("smile", flag: "--spare") == .smile)
        #expect(throws: ExpressionRuleError.self) { try ExpressionState.named("frown", flag: "--spare") }
    }

    /// The times at which `rule` ran over states sampled at 10 Hz: `on` holds for each showing's seconds.
    static func runs(_ rule: ExpressionRule, showings: [(from: Double, to: Double)], until end: Double = 10) -> [Double] {
        var triggers = ExpressionTriggers(rules: [rule])
        var ran: [Double] = []
        for step in 0...Int(end * 10) {
            let time = Double(step) / 10
            let on = showings.contains { time >= $0.from && time < $0.to }
            triggers.update(on ? [rule.state] : [], at: time) { _, _ in ran.append(time) }
        }
        return ran
    }

    @Test("a held expression runs its rule once, when the hold is reached, not while it lasts")
    func oncePerShowing() {
        let rule = ExpressionRule(state: .smile, hold: 2, command: "x")
        #expect(Self.runs(rule, showings: [(1, 8)]) == [3])
    }

    @Test("a shorter showing never runs it; the next long one does (re-armed when the state ends)")
    func shorterNever() {
        let rule = ExpressionRule(state: .smile, hold: 2, command: "x")
        #expect(Self.runs(rule, showings: [(0, 1.9), (2.5, 5), (5.5, 6), (6.5, 9)]) == [4.5, 8.5])
    }

    @Test("a hold of 0 runs at the first frame of each showing; other states leave the rule alone")
    func zeroHold() {
        var triggers = ExpressionTriggers(rules: [ExpressionRule(state: .winkLeft, command: "x")])
        var ran = 0
        for (time, states) in [(0.0, Set<ExpressionState>([.smile])), (0.1, [.winkLeft, .smile]), (0.2, [.winkLeft]), (0.3, []), (0.4, [.winkLeft])] {
            triggers.update(states, at: time) { _, _ in ran += 1 }
        }
        #expect(ran == 2)
    }

    @Test("SENTRY_SCORE reads the state's own score: a smile both sides' mean, a blink the weaker eye")
    func scores() {
        let scores = ExpressionScores(eyeBlinkLeft: 0.9, eyeBlinkRight: 0.7, jawOpen: 0.3, mouthSmileLeft: 0.8, mouthSmileRight: 0.6, browInnerUp: 0)
        #expect(abs(ExpressionState.smile.score(in: scores) - 0.7) < 1e-6)
        #expect(ExpressionState.blink.score(in: scores) == 0.7)
        #expect(ExpressionState.winkLeft.score(in: scores) == 0.9)
        #expect(ExpressionState.mouthOpen.score(in: scores) == 0.3)
    }
}
