import Events
import Expressions
import FoundationEssentials
import Geometry
import Hooks
import Imaging
import Logging
import Video
import TextOutput

/// `--expressions`: acts on the followed face's states as the pipeline read
/// them: runs `--on-expression` hooks once per held expression and logs
/// states as they begin and end. (`--spare` is the pipeline's own.)
final class ExpressionWatcher: FrameObserver {
    /// The states of the last frame, to log what began and ended.
    private var active: Set<ExpressionState> = []
    private var triggers: ExpressionTriggers
    /// A runner per `--on-expression` rule: rules due on the same frame all run, and a
    /// doorbell never waits behind, or replaces, a lock hook or another rule's command.
    private let runners: [HookRunner]
    private let logger: Logger

    init(rules: [ExpressionRule], hookTimeout: Double, logger: Logger) {
        triggers = ExpressionTriggers(rules: rules)
        runners = rules.map { _ in HookRunner(timeout: hookTimeout, logger: logger) }
        self.logger = logger
    }

    func didProcess(_ outcome: FrameOutcome) {
        let result = outcome.result
        guard let face = result.followedFace else { return forget() }
        let before = active
        active = face.states
        for state in active.subtracting(before) { logger.info("expression: \(state.rawValue) began") }
        for state in before.subtracting(active) { logger.info("expression: \(state.rawValue) ended") }
        triggers.update(active, at: result.timestamp) { index, rule in
            var environment = LockHooks.environment(event: "expression", turret: result.commanded, box: face.box, frameTime: result.timestamp)
            environment["SENTRY_EXPRESSION"] = rule.state.rawValue
            environment["SENTRY_SCORE"] = String(printf: "%.2f", rule.state.score(in: face.reading.scores))
            logger.notice("expression \(rule.state.rawValue) held \(rule.hold) s: running --on-expression")
            var job = HookRunner.Job(name: "on-expression \(rule.state.rawValue)", command: rule.command, environment: environment)
            let record = EventRecord(
                kind: .expression, unixTime: outcome.unixTime, frameTime: result.timestamp, frame: result.index, box: face.box,
                pan: result.commanded.pan, tilt: result.commanded.tilt)
            let frame = outcome.frame
            job.prepare = { HookPictures.write(record, frame: frame) }
            runners[index].submit(job)
        }
    }

    func cameraLost(_ error: VideoError, lockEvent: LockEventContext?) {
        forget()
    }

    func loopFinished() { for runner in runners { runner.finish() } }

    /// No face: every state ends, and every hold starts over.
    private func forget() {
        for state in active { logger.info("expression: \(state.rawValue) ended") }
        active = []
        triggers.update([], at: 0) { _, _ in }
    }
}
