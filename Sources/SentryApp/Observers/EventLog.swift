import Events
import FoundationEssentials
import Geometry
import Logging
import Tracking
import TurretProtocol

/// `--events DIR`: where events are kept, and how many.
public struct EventSettings: Sendable {
    public var directory: String
    /// At most this many events (`--events-keep`).
    public var keep = 1000
    /// At most this many bytes of them (`--events-max-mb`).
    public var maximumBytes = 500 << 20

    public init(directory: String) { self.directory = directory }
}

/// Turns each frame's outcome into events (a lock gained or lost, a shot, a
/// face arriving in a room empty for `--lost-after`, at least two seconds)
/// and hands them, with their frame, to the writer: nothing here waits for a disk.
final class EventLog: FrameObserver {
    private let writer: EventWriter
    /// When a face was last seen (frame clock); nil: not since the start.
    private var lastFaceSeen: Double?

    init(writer: EventWriter) { self.writer = writer }

    func didProcess(_ outcome: FrameOutcome) {
        let result = outcome.result
        var events: [(EventKind, Box)] = []
        let emptyFor = max(outcome.settings.tracking.lostAfter, 2)
        if let face = result.target ?? result.faces.first {
            if lastFaceSeen.map({ result.timestamp - $0 >= emptyFor }) ?? true { events.append((.arrive, face)) }
            lastFaceSeen = result.timestamp
        }
        switch result.lockEvent {
        case .locked(let box): events.append((.lock, box))
        case .lost(let box): events.append((.lost, box))
        case nil: break
        }
        if result.commands.contains(where: { $0.axis == .trigger }), let target = result.target { events.append((.shot, target)) }
        guard !events.isEmpty else { return }
        for (kind, box) in events {
            let record = EventRecord(
                kind: kind, unixTime: outcome.unixTime, frameTime: result.timestamp, frame: result.index, box: box, pan: result.commanded.pan,
                tilt: result.commanded.tilt)
            writer.submit(record, frame: outcome.frame)
        }
    }

    func loopFinished() { writer.finish() }
}
