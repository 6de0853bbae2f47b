/// Keeps every frame's result for the run's summary (tests); not registered
/// for long runs, where it would grow without bound.
final class ResultRecorder: FrameObserver {
    private(set) var results: [FrameResult] = []

    func didProcess(_ outcome: FrameOutcome) { results.append(outcome.result) }
}
