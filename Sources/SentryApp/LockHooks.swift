import FoundationEssentials
import Geometry
import Events
import Hooks
import Imaging
import Logging
import Tracking
import TextOutput

/// `--on-lock CMD`, `--on-lost CMD`, `--hook-timeout S`.
public struct LockHookSettings: Sendable {
    public var onLock: String?
    public var onLost: String?
    public var timeout: Double = LockHookSettings.defaultTimeout

    public static let defaultTimeout = 10.0

    public init(onLock: String? = nil, onLost: String? = nil) {
        self.onLock = onLock
        self.onLost = onLost
    }
}

/// Turns lock events into hook runs, with what a script needs to know in
/// its environment:
///
/// - `SENTRY_EVENT`: `lock` or `lost`
/// - `SENTRY_PAN`, `SENTRY_TILT`: the angles the turret holds
/// - `SENTRY_BOX`: `x,y,w,h` of the target in frame pixels (where it was
///   last seen, for `lost`)
/// - `SENTRY_TIME`: Unix time of the event, in seconds
/// - `SENTRY_FRAME_TIME`: the frame's timestamp (the clock of `--track`)
/// - `SENTRY_SNAPSHOT`, `SENTRY_FACE`: the frame and a crop of the face, JPEG
///   files that exist while the hook runs (when the camera went away: its last frame)
/// - `SENTRY_EVENT_ID`: the event's name, as `--events` keeps it
final class LockHooks {
    let settings: LockHookSettings
    let runner: HookRunner

    init(settings: LockHookSettings, logger: Logger) {
        self.settings = settings
        runner = HookRunner(timeout: settings.timeout, logger: logger)
    }

    /// Runs the event's hook, if one is set; `turret`: the angles it holds;
    /// `seen`: the frame it happened on (its pictures; the last one when the camera went away).
    func handle(_ event: LockOn.Event, turret: Aim, frameTime: Double, seen: (frame: Frame, unixTime: Double)?) {
        let (name, command, box): (String, String?, Box) =
            switch event {
            case .locked(let box): ("lock", settings.onLock, box)
            case .lost(let box): ("lost", settings.onLost, box)
            }
        guard let command else { return }
        var job = HookRunner.Job(name: "on-\(name)", command: command, environment: Self.environment(event: name, turret: turret, box: box, frameTime: frameTime))
        if let seen {
            let record = EventRecord(
                kind: name == "lock" ? .lock : .lost, unixTime: seen.unixTime, frameTime: frameTime, frame: seen.frame.index, box: box,
                pan: turret.pan, tilt: turret.tilt)
            job.prepare = { HookPictures.write(record, frame: seen.frame) }
        }
        runner.submit(job)
    }

    /// What every hook (`--on-lock`, `--on-lost`, `--on-expression`) finds in its environment.
    static func environment(event: String, turret: Aim, box: Box, frameTime: Double) -> [String: String] {
        [
            "SENTRY_EVENT": event,
            "SENTRY_PAN": String(turret.pan),
            "SENTRY_TILT": String(turret.tilt),
            "SENTRY_BOX": "\(box.x),\(box.y),\(box.width),\(box.height)",
            "SENTRY_TIME": String(printf: "%.3f", Date().timeIntervalSince1970),
            "SENTRY_FRAME_TIME": String(printf: "%.3f", frameTime),
        ]
    }

    func finish() { runner.finish() }
}
