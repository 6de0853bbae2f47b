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

/// The changes submitted and not yet applied, in order.
public final class RunChanges: Sendable {
    private let waiting = Mutex<[RunChange]>([])

    public init() {}

    /// Queues `change` for the frame loop's next turn.
    public func submit(_ change: RunChange) {
        waiting.withLock { $0.append(change) }
    }

    /// Every change waiting, oldest first; the queue is empty afterwards.
    func takeAll() -> [RunChange] {
        waiting.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
    }
}
