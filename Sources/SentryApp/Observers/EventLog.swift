import Events
import FoundationEssentials
import Logging
import Video

/// `--events DIR`: where events are kept, and how many.
public struct EventSettings: Sendable {
    public var directory: String
    /// At most this many events (`--events-keep`).
    public var keep = 1000
    /// At most this many bytes of them (`--events-max-mb`).
    public var maximumBytes = 500 << 20

    public init(directory: String) { self.directory = directory }
}

/// Hands each frame's events (`FrameResult.events`), with their frame, to
/// the writer: nothing here waits for a disk. The writer is a service of the
/// run (`RunServices`), stopped after the loop.
final class EventLog: FrameObserver {
    let writer: EventWriter

    init(writer: EventWriter) { self.writer = writer }

    func didProcess(_ outcome: FrameOutcome) {
        for event in outcome.result.events { writer.submit(outcome.record(of: event), frame: outcome.frame) }
    }

    func cameraLost(_ error: VideoError, lost: CameraLossEvent?) {
        if let lost { writer.submit(lost.record, frame: lost.lastFrame) }
    }
}
