import Events
import Expressions
import FoundationEssentials
import Hooks
import Logging
import Video
import TextOutput

/// `--expressions`: runs the `--on-expression` hook of each rule the
/// pipeline found fired (`FrameEvent.expression`) and logs the followed
/// face's states as they begin and end. (`--spare` is the pipeline's own.)
final class ExpressionWatcher: FrameObserver {
    /// The states of the last frame, to log what began and ended.
    private var active: Set<ExpressionState> = []
    private let rules: [ExpressionRule]
    /// A runner per `--on-expression` rule: rules due on the same frame all run, and a
    /// doorbell never waits behind, or replaces, a lock hook or another rule's command.
    private let runners: [HookRunner]
    private let logger: Logger

    init(rules: [ExpressionRule], hookTimeout: Double, logger: Logger) {
        self.rules = rules
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
        for event in result.events {
            guard let fired = event.expression else { continue }
            let rule = rules[fired.rule]
            let (record, frame) = (outcome.record(of: event), outcome.frame)
            logger.notice("expression \(rule.state.rawValue) held \(rule.hold) s: running --on-expression")
            var job = HookRunner.Job(name: "on-expression \(rule.state.rawValue)", command: rule.command, environment: EventHooks.environment(of: record))
            job.prepare = { HookPictures.write(record, frame: frame) }
            runners[fired.rule].submit(job)
        }
    }

    func cameraLost(_ error: VideoError, lost: CameraLossEvent?) {
        forget()
    }

    /// Stops the hooks (a service of the run, `RunServices`).
    func finish() { for runner in runners { runner.finish() } }

    /// No face: every state ends.
    private func forget() {
        for state in active { logger.info("expression: \(state.rawValue) ended") }
        active = []
    }
}
