import Expressions
import FaceMesh
import FoundationEssentials
import Geometry
import Hooks
import Imaging
import Logging
import Video
import TextOutput

/// The followed face on one frame: its points, where it is, what they read, its states.
public struct FollowedFace: Sendable {
    public var landmarks: FaceLandmarks
    /// Its box among the frame's faces (the mesh's bounds).
    public var box: Box
    /// The face is the tracker's target.
    public var isTarget: Bool
    public var reading: FaceReading
    public var states: Set<ExpressionState>
}

/// `--expressions`: reads the followed face's expression on every frame from the
/// points the detector's mesh found (`MeshFollowingDetector`), and acts on it:
/// runs `--on-expression` hooks once per held expression, holds fire while the
/// target shows the `--spare` state, and logs states as they begin and end.
/// Observers registered after it (the console, the status line) read `latest`.
final class ExpressionWatcher: FrameObserver {
    /// The last frame's reading; nil when no face was followed (or the detector has no mesh).
    private(set) var latest: FollowedFace?
    private var states = ExpressionStates()
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

    /// Holds fire for the next frame while the target showed the `--spare` state on this one.
    func willProcess(_ frame: Frame, pipeline: Pipeline) {
        guard let spare = pipeline.settings.spare, let latest, latest.isTarget, latest.states.contains(spare) else {
            pipeline.spare(nil)
            return
        }
        pipeline.spare(spare)
    }

    func didProcess(_ context: FrameContext) {
        let result = context.result
        guard let mesh = context.pipeline.detector as? MeshFollowingDetector, let points = mesh.landmarks, let box = result.faces.last else {
            return forget()
        }
        let reading = FaceReading(points, in: context.frame.image)
        let scores = reading.scores
        let before = latest?.states ?? []
        let active = states.update(scores, at: result.timestamp)
        latest = FollowedFace(landmarks: points, box: box, isTarget: result.target == box, reading: reading, states: active)
        for state in active.subtracting(before) { logger.info("expression: \(state.rawValue) began") }
        for state in before.subtracting(active) { logger.info("expression: \(state.rawValue) ended") }
        triggers.update(active, at: result.timestamp) { index, rule in
            var environment = LockHooks.environment(event: "expression", turret: result.commanded, box: box, frameTime: result.timestamp)
            environment["SENTRY_EXPRESSION"] = rule.state.rawValue
            environment["SENTRY_SCORE"] = String(printf: "%.2f", rule.state.score(in: scores))
            logger.notice("expression \(rule.state.rawValue) held \(rule.hold) s: running --on-expression")
            runners[index].submit(HookRunner.Job(name: "on-expression \(rule.state.rawValue)", command: rule.command, environment: environment))
        }
    }

    func cameraLost(_ error: VideoError, lockEvent: LockEventContext?) {
        forget()
    }

    func loopFinished() { for runner in runners { runner.finish() } }

    /// No face: every state ends, and every hold starts over.
    private func forget() {
        for state in latest?.states ?? [] { logger.info("expression: \(state.rawValue) ended") }
        latest = nil
        states = ExpressionStates()
        triggers.update([], at: 0) { _, _ in }
    }
}
