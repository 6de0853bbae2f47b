import FaceDetection
import Synchronization
import Tracking

/// A change to the run, as a value: what the console asks for (and the
/// next control sources, MQTT among them). Any thread submits one to
/// `RunChanges`; the frame loop applies them between frames, in the order
/// received, in one place (`Pipeline.apply`), so no control source ever
/// touches the pipeline.
public enum RunChange: Sendable {
    /// New settings for tracking, aiming, lock and fire.
    case settings(PipelineSettings)
    /// Another detector, built off the frame loop, and its name.
    case detector(DetectorHandOff)
    /// A person steers the turret (a point, a nudge, scan, centre, auto).
    case steer(SteeringRequest)
}

/// A detector built on another thread, handed to the frame loop once. A
/// detector keeps scratch buffers for one thread; the sender lets go of it.
public struct DetectorHandOff: @unchecked Sendable {
    public var detector: any FaceDetector
    public var name: String

    public init(detector: any FaceDetector, name: String) {
        self.detector = detector
        self.name = name
    }
}

/// The changes submitted and not yet applied, coalesced: the newest
/// settings, the newest detector and the newest steering win (nudges in a
/// row add up). However many requests arrive while the frame loop waits
/// (a camera reopening for minutes), at most one of each waits, and a
/// detector replaced before it was used is let go at once.
public final class RunChanges: Sendable {
    private struct Waiting {
        var settings: PipelineSettings?
        var detector: DetectorHandOff?
        var steering: SteeringRequest?
    }

    private let waiting = Mutex(Waiting())

    public init() {}

    /// Queues `change` for the frame loop's next turn, in place of one of its kind waiting.
    public func submit(_ change: RunChange) {
        waiting.withLock { waiting in
            switch change {
            case .settings(let settings): waiting.settings = settings
            case .detector(let handOff): waiting.detector = handOff
            case .steer(let request): waiting.steering = waiting.steering.map { $0.followed(by: request) } ?? request
            }
        }
    }

    /// Every change waiting: settings, then the detector, then steering; none wait afterwards.
    func takeAll() -> [RunChange] {
        let taken = waiting.withLock { waiting in
            defer { waiting = Waiting() }
            return waiting
        }
        return [taken.settings.map(RunChange.settings), taken.detector.map(RunChange.detector), taken.steering.map(RunChange.steer)].compactMap { $0 }
    }
}

extension SteeringRequest {
    /// One request that does what `self` and then `next` would: nudges add up, anything else replaces.
    func followed(by next: SteeringRequest) -> SteeringRequest {
        if case .nudge(let pan, let tilt) = self, case .nudge(let morePan, let moreTilt) = next { return .nudge(pan: pan + morePan, tilt: tilt + moreTilt) }
        return next
    }
}
