import ArgumentParser
import Events
import FoundationEssentials
import Geometry
import TextOutput

/// `sentry events`: what `--events` kept, from a terminal.
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "List the events --events kept: time, kind, frame, box, angles and the pictures' paths.")

    @Option(help: "The events folder (default: the settings file's events, else /var/lib/sentry/events).", completion: .directory)
    var events: String?

    @Flag(help: "One JSON record per line, with the pictures' paths.")
    var json = false

    @Option(help: "Only events since then: YYYY-MM-DD[THH:MM[:SS]] (UTC), or a time ago, e.g. 30m, 2h, 7d.")
    var since: String?

    func validate() throws {
        if let since, Self.unixTime(since, now: Date().timeIntervalSince1970) == nil {
            throw ValidationError("--since \(since) is neither YYYY-MM-DD[THH:MM[:SS]] nor a time ago such as 30m, 2h or 7d")
        }
    }

    func run() throws {
        let directory = events ?? SettingsFile.configuredValue("events") ?? "/var/lib/sentry/events"
        let store = try failingCleanly { () throws(EventStoreError) in try EventStore(reading: directory) }
        let from = since.flatMap { Self.unixTime($0, now: Date().timeIntervalSince1970) } ?? -.infinity
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for record in store.records() where record.unixTime >= from {
            let paths = store.paths(of: record.id)
            if json {
                struct Line: Encodable {
                    var record: EventRecord
                    var frameFile: String
                    var faceFile: String
                }
                let line = (try? encoder.encode(Line(record: record, frameFile: paths.frame, faceFile: paths.face))).map { String(decoding: $0, as: UTF8.self) }
                print(line ?? "{}")
            } else {
                let box = record.box
                print(
                    "\(record.id.split(separator: "/").joined(separator: " "))  frame \(record.frame)  box \(box.x),\(box.y),\(box.width),\(box.height)  pan \(record.pan) tilt \(record.tilt)  \(paths.face)"
                )
            }
        }
    }

    /// The settings file's `events`, if it names one.
    /// `text` as Unix seconds: a UTC date and time, or a time ago (`30m`, `2h`, `7d`, `90s`).
    static func unixTime(_ text: String, now: Double) -> Double? {
        if let unit = text.last, let factor = ["s": 1.0, "m": 60, "h": 3600, "d": 86_400][String(unit)], let count = Double(text.dropLast()),
            count.isFinite, count >= 0
        {
            return now - count * factor
        }
        let parts = text.split(separator: "T", maxSplits: 1)
        guard !parts.isEmpty else { return nil }
        let date = parts[0].split(separator: "-").compactMap { Int($0) }
        let clock = parts.count > 1 ? parts[1].split(separator: ":").compactMap { Int($0) } : []
        guard date.count == 3, (1...12).contains(date[1]), (1...31).contains(date[2]), clock.count <= 3,
            parts.count == 1 || !clock.isEmpty, zip(clock, [24, 60, 60]).allSatisfy({ $0 >= 0 && $0 < $1 })
        else { return nil }
        // Days from the civil date (Howard Hinnant's days_from_civil).
        let (year, month, day) = (date[1] <= 2 ? date[0] - 1 : date[0], date[1], date[2])
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = zip(clock + [0, 0, 0], [3600, 60, 1]).reduce(0) { $0 + $1.0 * $1.1 }
        return Double(days * 86_400 + seconds)
    }
}
