import Events
import FoundationEssentials
import Geometry
import Hooks
import Imaging
import Logging
import TextOutput
import Video

/// `--on-event KIND=CMD` (`--on-lock CMD` and `--on-lost CMD` are `lock=` and
/// `lost=`), `--hook-timeout S`.
public struct EventHookSettings: Sendable {
    /// The command each kind of event runs.
    public var commands: [EventKind: String] = [:]
    public var timeout: Double = EventHookSettings.defaultTimeout

    public static let defaultTimeout = 10.0

    public init(commands: [EventKind: String] = [:]) { self.commands = commands }
}

/// Runs the command of each event's kind, for every event the pipeline
/// found (and the `lost` of a camera gone), with what a script needs to know
/// in its environment:
///
/// - `SENTRY_EVENT`: the kind (`arrive`, `lock`, `lost`, `shot`, `expression`)
/// - `SENTRY_PAN`, `SENTRY_TILT`: the angles the turret holds
/// - `SENTRY_BOX`: `x,y,w,h` of the face in frame pixels (where it was last seen, for `lost`)
/// - `SENTRY_TIME`: Unix time of the event, in seconds
/// - `SENTRY_FRAME_TIME`: the frame's timestamp (the clock of `--track`)
/// - `SENTRY_EXPRESSION`, `SENTRY_SCORE`: for `expression`, the state and its score
/// - `SENTRY_SNAPSHOT`, `SENTRY_FACE`: the frame and a crop of the face, JPEG
///   files that exist while the hook runs (when the camera went away: its last frame)
/// - `SENTRY_EVENT_ID`: the event's name, as `--events` keeps it
/// - `SENTRY_PERSON`: with `--known`, who the target is (a name, or `stranger`), once read
///
/// One hook at a time, never blocking a frame (`HookRunner`).
final class EventHooks: FrameObserver {
    let settings: EventHookSettings
    let runner: HookRunner

    /// `nil` when no event has a command.
    init?(settings: EventHookSettings, logger: Logger) {
        guard !settings.commands.isEmpty else { return nil }
        self.settings = settings
        runner = HookRunner(timeout: settings.timeout, logger: logger)
    }

    func didProcess(_ outcome: FrameOutcome) {
        for event in outcome.result.events { run(outcome.record(of: event), frame: outcome.frame) }
    }

    func cameraLost(_ error: VideoError, lost: CameraLossEvent?) {
        if let lost { run(lost.record, frame: lost.lastFrame) }
    }

    private func run(_ record: EventRecord, frame: Frame) {
        guard let command = settings.commands[record.kind] else { return }
        var job = HookRunner.Job(name: "on-\(record.kind.rawValue)", command: command, environment: Self.environment(of: record))
        job.prepare = { HookPictures.write(record, frame: frame) }
        runner.submit(job)
    }

    /// What every hook (`--on-event`, `--on-lock`, `--on-lost`, `--on-expression`) finds in its environment.
    static func environment(of record: EventRecord) -> [String: String] {
        let box = record.box
        var environment = [
            "SENTRY_EVENT": record.kind.rawValue,
            "SENTRY_PAN": String(record.pan),
            "SENTRY_TILT": String(record.tilt),
            "SENTRY_BOX": "\(box.x),\(box.y),\(box.width),\(box.height)",
            "SENTRY_TIME": String(printf: "%.3f", record.unixTime),
            "SENTRY_FRAME_TIME": String(printf: "%.3f", record.frameTime),
        ]
        if let expression = record.expression { environment["SENTRY_EXPRESSION"] = expression }
        if let score = record.score { environment["SENTRY_SCORE"] = String(printf: "%.2f", score) }
        if let person = record.person { environment["SENTRY_PERSON"] = person }
        return environment
    }
}
