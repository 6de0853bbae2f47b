import ArgumentParser
import SentryApp

/// Events kept with their pictures (`run`): where, and how many.
struct EventOptions: ParsableArguments {
    @Option(
        help:
            "Keep each lock, loss, shot, arrival and --on-expression rule that fires with the frame and a crop of the face (JPEG) and a JSON record, in a folder per day under DIR. Off unless given (the service keeps /var/lib/sentry/events).",
        completion: .directory)
    var events: String?

    @Option(parsing: .unconditional, help: "Keep at most this many events; the oldest go first.")
    var eventsKeep: Int = 1000

    @Option(parsing: .unconditional, help: "Keep at most this many megabytes of events; the oldest go first.")
    var eventsMaxMb: Int = 500

    func validate() throws {
        if let events, events.isEmpty { throw ValidationError("--events needs a folder, e.g. --events ~/sentry-events") }
        guard (1...1_000_000).contains(eventsKeep) else { throw ValidationError("--events-keep \(eventsKeep) must be between 1 and 1000000") }
        guard (1...1_000_000).contains(eventsMaxMb) else { throw ValidationError("--events-max-mb \(eventsMaxMb) must be between 1 and 1000000") }
    }

    /// The settings; `nil` without `--events`.
    var settings: EventSettings? {
        events.map { directory in
            var settings = EventSettings(directory: directory)
            settings.keep = eventsKeep
            settings.maximumBytes = eventsMaxMb << 20
            return settings
        }
    }
}
