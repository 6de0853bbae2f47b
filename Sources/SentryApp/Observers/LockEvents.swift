import Events
import Geometry
import Imaging
import Logging
import Tracking
import TurretProtocol
import Video

/// A lock gained or lost, with what the turret held at that moment.
public struct LockEventContext: Sendable {
    public var event: LockOn.Event
    /// The angles the turret holds.
    public var turret: Aim
    /// The frame's timestamp (the clock of `--track`).
    public var frameTime: Double
}

/// The lock lost because the camera went away: the same `lost` event every
/// observer tells of (the events folder, MQTT, the hooks), with the last
/// frame seen, where the target still was, for its pictures.
public struct CameraLossEvent: Sendable {
    public var lock: LockEventContext
    public var record: EventRecord
    public var lastFrame: Frame
}

/// Logs locks, losses and shots, and runs `--on-lock`/`--on-lost` for them.
final class LockEvents: FrameObserver {
    private let logger: Logger
    /// `nil` without `--on-lock`/`--on-lost`.
    let hooks: LockHooks?

    init(hooks settings: LockHookSettings, logger: Logger) {
        self.logger = logger
        hooks = settings.onLock != nil || settings.onLost != nil ? LockHooks(settings: settings, logger: logger) : nil
    }

    func didProcess(_ outcome: FrameOutcome) {
        let result = outcome.result
        if let event = result.lockEvent {
            report(LockEventContext(event: event, turret: result.commanded, frameTime: result.timestamp), seen: (outcome.frame, outcome.unixTime))
        }
        if let shot = result.commands.first(where: { $0.axis == .trigger }) { logger.notice("fire: sent \(shot)") }
    }

    func cameraLost(_ error: VideoError, lost: CameraLossEvent?) {
        if let lost { report(lost.lock, seen: (lost.lastFrame, lost.record.unixTime)) }
    }

    func loopFinished() { hooks?.finish() }

    private func report(_ context: LockEventContext, seen: (frame: Frame, unixTime: Double)?) {
        switch context.event {
        case .locked(let box): logger.notice("target locked at \(box)")
        case .lost(let box): logger.notice("lock lost (target last seen at \(box))")
        }
        hooks?.handle(context.event, turret: context.turret, frameTime: context.frameTime, seen: seen)
    }
}
