import Events
import Geometry
import Imaging
import Logging
import Tracking
import TurretProtocol
import Video

/// The lock lost because the camera went away: the same `lost` event every
/// observer tells of (the events folder, MQTT, the hooks), with the last
/// frame seen, where the target still was, for its pictures.
public struct CameraLossEvent: Sendable {
    /// A `lost` record: where the target was last seen, what the turret holds now.
    public var record: EventRecord
    public var lastFrame: Frame
}

/// Logs locks, losses and shots (their hooks are `EventHooks`').
final class LockEvents: FrameObserver {
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    func didProcess(_ outcome: FrameOutcome) {
        let result = outcome.result
        if let event = result.lockEvent { report(event) }
        if let shot = result.commands.first(where: { $0.axis == .trigger }) { logger.notice("fire: sent \(shot)") }
    }

    func cameraLost(_ error: VideoError, lost: CameraLossEvent?) {
        if let lost { report(.lost(lost.record.box)) }
    }

    private func report(_ event: LockOn.Event) {
        switch event {
        case .locked(let box): logger.notice("target locked at \(box)")
        case .lost(let box): logger.notice("lock lost (target last seen at \(box))")
        }
    }
}
