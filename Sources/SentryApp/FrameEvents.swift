import Events
import FaceRecognition
import Expressions
import Geometry
import Tracking
import TurretProtocol

/// Something worth a record that happened on a frame: a lock gained or
/// lost, a shot, a face arriving in an empty room, an `--on-expression`
/// rule firing. Found once, by the pipeline, so that every observer (the
/// events folder, the hooks, the console) tells of the same events.
public struct FrameEvent: Sendable, Equatable {
    public var kind: EventKind
    /// The face it concerns, in frame pixels.
    public var box: Box
    /// For `expression`: the rule that fired.
    public var expression: FiredRule?

    public init(kind: EventKind, box: Box, expression: FiredRule? = nil) {
        (self.kind, self.box, self.expression) = (kind, box, expression)
    }
}

/// An `--on-expression` rule that just fired, with the score its state was read from.
public struct FiredRule: Sendable, Equatable {
    /// Its place among the `--on-expression` flags (which hook runs).
    public var rule: Int
    public var state: ExpressionState
    public var score: Float
}

/// Finds each frame's events from what the pipeline decided. Holds what
/// they need to remember: when a face was last seen (an arrival is a face
/// after `--lost-after`, at least two seconds, of nobody) and how long each
/// rule's expression has been held.
struct FrameEventFinder {
    /// A room empty for less than this is not empty: a face lost for a blink comes back, it does not arrive.
    static let shortestAbsence = 2.0
    private var lastFaceSeen: Double?
    private var triggers: ExpressionTriggers

    init(rules: [ExpressionRule]) { triggers = ExpressionTriggers(rules: rules) }

    /// The events of the frame at `time`, in the order they happened.
    mutating func events(
        at time: Double, faces: [Box], target: Box?, lockEvent: LockOn.Event?, commands: [Command], followed: FollowedFace?, lostAfter: Double
    ) -> [FrameEvent] {
        var events: [FrameEvent] = []
        if let face = target ?? faces.first {
            if lastFaceSeen.map({ time - $0 >= max(lostAfter, Self.shortestAbsence) }) ?? true { events.append(FrameEvent(kind: .arrive, box: face)) }
            lastFaceSeen = time
        }
        switch lockEvent {
        case .locked(let box): events.append(FrameEvent(kind: .lock, box: box))
        case .lost(let box): events.append(FrameEvent(kind: .lost, box: box))
        case nil: break
        }
        if commands.contains(where: { $0.axis == .trigger }), let target { events.append(FrameEvent(kind: .shot, box: target)) }
        if let followed {
            triggers.update(followed.states, at: time) { index, rule in
                let fired = FiredRule(rule: index, state: rule.state, score: rule.state.score(in: followed.reading.scores))
                events.append(FrameEvent(kind: .expression, box: followed.box, expression: fired))
            }
        } else {
            forgetExpressions()
        }
        return events
    }

    /// No face read: every held expression starts over.
    mutating func forgetExpressions() { triggers.update([], at: 0) { _, _ in } }
}

extension FrameOutcome {
    /// `event` as the events folder and the hooks record it; `at` and `turret`: when it
    /// happened and what the turret held then, if not this frame's (the camera gone after it).
    func record(of event: FrameEvent, at time: Double? = nil, turret: Aim? = nil) -> EventRecord {
        let turret = turret ?? result.commanded
        var record = EventRecord(
            kind: event.kind, unixTime: time ?? unixTime, frameTime: result.timestamp, frame: result.index, box: event.box, pan: turret.pan,
            tilt: turret.tilt)
        record.armed = settings.fire != nil
        record.person = result.personName
        if let fired = event.expression {
            record.ruleFired(fired.rule, state: fired.state.rawValue, score: (Double(fired.score) * 100).rounded() / 100)
        }
        return record
    }
}
