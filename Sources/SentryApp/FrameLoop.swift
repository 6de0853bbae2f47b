import Imaging
import Logging
import MonotonicTime
import Video

/// What an observer is told about a frame the pipeline has handled.
public struct FrameContext {
    public let frame: Frame
    public let result: FrameResult
    /// When the source handed the frame over (monotonic seconds).
    public let capturedAt: Double
    /// The pipeline, for its settings, steering and detector.
    public let pipeline: Pipeline
}

/// Something the frame loop tells about each frame, and about the camera
/// going and coming back. The loop itself only moves frames through the
/// pipeline; everything else a run does (the console, hooks, the status
/// line, the `--track` table, hot-plug) is an observer registered at start,
/// so a new capability is a new observer, not more lines in the loop.
///
/// Observers run on the frame loop's thread, in the order registered: each
/// must return quickly and hand slow work (hooks, encoding, serving) to its
/// own threads.
public protocol FrameObserver: AnyObject {
    /// Before `frame` goes through the pipeline: the one place where an
    /// observer may change the pipeline (the console's settings and steering).
    func willProcess(_ frame: Frame, pipeline: Pipeline)
    /// After the pipeline handled a frame and wrote its commands.
    func didProcess(_ context: FrameContext)
    /// The camera went away; the pipeline has sent its sweep. `lockEvent`:
    /// the lock lost with it, if there was one.
    func cameraLost(_ error: VideoError, lockEvent: LockEventContext?)
    /// The camera `path` (as `--camera` named it) is back.
    func cameraBack(_ path: String)
    /// The loop ended (the stream ended, `--frames`, or a signal), after the
    /// parting command was flushed.
    func loopFinished()
}

extension FrameObserver {
    public func willProcess(_ frame: Frame, pipeline: Pipeline) {}
    public func didProcess(_ context: FrameContext) {}
    public func cameraLost(_ error: VideoError, lockEvent: LockEventContext?) {}
    public func cameraBack(_ path: String) {}
    public func loopFinished() {}
}

/// Frames from the source through the pipeline to the observers, until the
/// stream ends, `maxFrames` is reached or a signal asks to stop.
final class FrameLoop {
    private let pipeline: Pipeline
    private let camera: RecoveringCamera
    private let observers: [any FrameObserver]
    private let logger: Logger

    init(pipeline: Pipeline, camera: RecoveringCamera, observers: [any FrameObserver], logger: Logger) {
        self.pipeline = pipeline
        self.camera = camera
        self.observers = observers
        self.logger = logger
    }

    /// Runs the loop; returns the number of frames processed.
    func run(maxFrames: Int?, onExit: ExitCommand) throws -> Int {
        let watchdog = FrameLoopWatchdog(observerNames: observers.map { "\(type(of: $0))" }, logger: logger)
        defer { watchdog.stop() }
        var frameCount = 0
        while !StopSignal.isRequested, frameCount < maxFrames ?? .max {
            let frame: Frame
            switch try camera.next() {
            case .frame(let next):
                frame = next
            case .end:
                try finish(onExit, watchdog: watchdog)
                return frameCount
            case .lost(let error):
                watchdog.cameraLost()
                let lockEvent = try pipeline.cameraLost().map {
                    LockEventContext(event: $0, turret: pipeline.commanded, frameTime: pipeline.lastFrameTime)
                }
                for observer in observers { observer.cameraLost(error, lockEvent: lockEvent) }
                let path = try camera.reopen()
                watchdog.enter(.waitingForFrame)
                for observer in observers { observer.cameraBack(path) }
                continue
            }
            let capturedAt = monotonicSeconds()
            for (index, observer) in observers.enumerated() {
                watchdog.enter(.observer(index))
                observer.willProcess(frame, pipeline: pipeline)
            }
            watchdog.enter(.pipeline)
            let result = try pipeline.process(frame)
            frameCount += 1
            let context = FrameContext(frame: frame, result: result, capturedAt: capturedAt, pipeline: pipeline)
            for (index, observer) in observers.enumerated() {
                watchdog.enter(.observer(index))
                observer.didProcess(context)
            }
            watchdog.frameDone()
        }
        try finish(onExit, watchdog: watchdog)
        return frameCount
    }

    private func finish(_ onExit: ExitCommand, watchdog: FrameLoopWatchdog) throws {
        watchdog.enter(.finishing)
        try pipeline.finish(with: onExit)
        for observer in observers { observer.loopFinished() }
    }
}
