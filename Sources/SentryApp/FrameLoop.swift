import Events
import FoundationEssentials
import Geometry
import Imaging
import Logging
import MonotonicTime
import Tracking
import Turret
import TurretLinks
import Video

/// Everything that happened to one frame, as one value: what observers are
/// given instead of the pipeline, so none of them can change the run or
/// depend on another's order. Changes go the other way, as `RunChange`s.
public struct FrameOutcome: Sendable {
    public let frame: Frame
    /// When the source handed the frame over (monotonic seconds).
    public let capturedAt: Double
    /// The same moment on the host's clock (Unix seconds): what events are named by.
    public let unixTime: Double
    /// What the pipeline found and did: faces with scores, the followed face's
    /// reading, the tracker's decision, the commands, lock and fire, timings.
    public let result: FrameResult
    /// The settings the frame was processed with.
    public let settings: PipelineSettings
    /// Who pointed the turret this frame.
    public let steering: Steering
    public let detectorName: String
    /// The link's state once the frame's commands were handed to it.
    public let link: LinkState
}

/// Something the frame loop tells about each frame, and about the camera
/// going and coming back. The loop itself only moves frames through the
/// pipeline; everything else a run does (the console, hooks, the status
/// line, the `--track` table) is an observer registered at start, so a new
/// capability is a new observer, not more lines in the loop. An observer
/// that wants to change the run (the console) submits `RunChange`s.
///
/// Observers run on the frame loop's thread, in the order registered: each
/// must return quickly and hand slow work (hooks, encoding, serving) to its
/// own threads.
public protocol FrameObserver: AnyObject {
    /// After the pipeline handled a frame and wrote its commands.
    func didProcess(_ outcome: FrameOutcome)
    /// The camera went away; the pipeline has sent its sweep. `lost`: the
    /// lock lost with it, if there was one, an event as any frame's are.
    func cameraLost(_ error: VideoError, lost: CameraLossEvent?)
    /// The camera `path` (as `--camera` named it) is back.
    func cameraBack(_ path: String)
    /// The loop ended, however it ended (the stream ended, `--frames`, a
    /// signal, an error thrown), after the parting command was flushed where
    /// the link still took it. Threads are not ended here: the run's
    /// services (`RunServices`) stop them, in one order.
    func loopFinished()
}

extension FrameObserver {
    public func didProcess(_ outcome: FrameOutcome) {}
    public func cameraLost(_ error: VideoError, lost: CameraLossEvent?) {}
    public func cameraBack(_ path: String) {}
    public func loopFinished() {}
}

/// Frames from the source through the pipeline to the observers, until the
/// stream ends, `maxFrames` is reached or a signal asks to stop. Before each
/// frame it applies the changes submitted since the last.
final class FrameLoop {
    private let pipeline: Pipeline
    private let camera: RecoveringCamera
    private let observers: [any FrameObserver]
    private let changes: RunChanges
    private let logger: Logger

    init(pipeline: Pipeline, camera: RecoveringCamera, observers: [any FrameObserver], changes: RunChanges, logger: Logger) {
        self.pipeline = pipeline
        self.camera = camera
        self.observers = observers
        self.changes = changes
        self.logger = logger
    }

    /// Runs the loop; returns the number of frames processed. Every way out
    /// (an error thrown too) sends the parting command and ends every observer.
    func run(maxFrames: Int?, onExit: ExitCommand) throws -> Int {
        let watchdog = FrameLoopWatchdog(observerNames: observers.map { "\(type(of: $0))" }, logger: logger)
        defer { watchdog.stop() }
        let frameCount: Int
        do {
            frameCount = try frames(upTo: maxFrames, watchdog: watchdog)
        } catch {
            // The link may be what failed: the parting command is tried, the observers end regardless.
            try? finish(onExit, watchdog: watchdog)
            throw error
        }
        try finish(onExit, watchdog: watchdog)
        return frameCount
    }

    /// Frames until the stream ends, `maxFrames`, or a stop; how many.
    private func frames(upTo maxFrames: Int?, watchdog: FrameLoopWatchdog) throws -> Int {
        var frameCount = 0
        /// The last frame's outcome: what a loss of the camera is told against.
        var last: FrameOutcome?
        while !StopSignal.isRequested, frameCount < maxFrames ?? .max {
            let frame: Frame
            switch try camera.next() {
            case .frame(let next):
                frame = next
            case .end:
                return frameCount
            case .lost(let error):
                watchdog.cameraLost()
                let lost = try pipeline.cameraLost().flatMap { event in last.map { CameraLossEvent(event, after: $0, turret: pipeline.commanded) } }
                for observer in observers { observer.cameraLost(error, lost: lost) }
                // Stopped while the camera is away: an end like any other, not a failure.
                guard let path = camera.reopen() else { return frameCount }
                watchdog.enter(.waitingForFrame)
                for observer in observers { observer.cameraBack(path) }
                continue
            }
            let capturedAt = monotonicSeconds()
            watchdog.enter(.pipeline)
            for change in changes.takeAll() { pipeline.apply(change, frameWidth: frame.image.width, frameHeight: frame.image.height) }
            let result = try pipeline.process(frame)
            frameCount += 1
            let outcome = FrameOutcome(
                frame: frame, capturedAt: capturedAt, unixTime: Date().timeIntervalSince1970 - (monotonicSeconds() - capturedAt), result: result, settings: pipeline.settings, steering: pipeline.steering,
                detectorName: pipeline.detectorName, link: pipeline.output.state)
            for (index, observer) in observers.enumerated() {
                watchdog.enter(.observer(index))
                observer.didProcess(outcome)
            }
            last = outcome
            watchdog.frameDone()
        }
        return frameCount
    }

    /// The parting command, then every observer's end, even when the command cannot be sent.
    private func finish(_ onExit: ExitCommand, watchdog: FrameLoopWatchdog) throws {
        watchdog.enter(.finishing)
        defer { for observer in observers { observer.loopFinished() } }
        try pipeline.finish(with: onExit)
    }
}

extension CameraLossEvent {
    /// The lock `event` lost now, the camera gone after the frame of `last`; `turret`: what it holds now.
    init(_ event: LockOn.Event, after last: FrameOutcome, turret: Aim) {
        let box: Box = switch event {
        case .locked(let box), .lost(let box): box
        }
        record = last.record(of: FrameEvent(kind: .lost, box: box), at: Date().timeIntervalSince1970, turret: turret)
        lastFrame = last.frame
    }
}
