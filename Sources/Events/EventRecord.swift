import Geometry

/// Something the turret did that is worth a record with its picture: a lock
/// gained or lost, a shot, a face arriving in an empty room, an
/// `--on-expression` rule firing.
public enum EventKind: String, Codable, Sendable, CaseIterable {
    case lock, lost, shot, arrive, expression
}

/// One event as its JSON sidecar holds it. Its pictures are the files next
/// to it with the same name: `NAME.jpg` (the frame, nothing drawn on it) and
/// `NAME-face.jpg` (a crop around the face).
public struct EventRecord: Codable, Sendable, Equatable {
    /// The file name the record and its pictures share, without extension:
    /// `HHMMSS.mmm-KIND-FRAME`, in the day's folder `YYYY-MM-DD`; an expression's
    /// ends in `-RULE` (`ruleFired`), as several rules may fire on one frame.
    public var id: String
    public var kind: EventKind
    /// Seconds since 1970 (the host's clock) and on the frames' clock.
    public var unixTime: Double
    public var frameTime: Double
    public var frame: Int
    /// The target's box in frame pixels.
    public var box: Box
    /// The angles the turret held.
    public var pan: Int
    public var tilt: Int
    /// For `expression`: the state its rule waits for (`smile`…) and the score it was read from, 0 to 1.
    public var expression: String?
    public var score: Double?
    /// Whether the run was armed (`--fire`) when it happened; absent in records from before it was kept.
    public var armed: Bool?
    /// Who the target was (`--known`): an enrolled person's name, or `stranger`; absent when not yet read or not asked.
    public var person: String?

    public init(kind: EventKind, unixTime: Double, frameTime: Double, frame: Int, box: Box, pan: Int, tilt: Int) {
        self.kind = kind
        self.unixTime = unixTime
        self.frameTime = frameTime
        self.frame = frame
        self.box = box
        self.pan = pan
        self.tilt = tilt
        let day = CivilTime(unixTime: unixTime)
        id = "\(day.folder)/\(day.clock)-\(kind.rawValue)-\(frame)"
    }

    /// Marks an expression event as the one of `--on-expression` rule `rule` (from 0): its state, its score and its own id.
    public mutating func ruleFired(_ rule: Int, state: String, score: Double) {
        expression = state
        self.score = score
        let day = CivilTime(unixTime: unixTime)
        id = "\(day.folder)/\(day.clock)-\(kind.rawValue)-\(frame)-\(rule)"
    }
}

extension EventRecord {
    /// `person` for a target that is none of the household's.
    public static let stranger = "stranger"

    /// Whether `id` has the shape of an event's name, `YYYY-MM-DD/HHMMSS.mmm-KIND-FRAME[-RULE]`,
    /// byte for byte: a name from outside (a URL) is checked with it before
    /// it comes near a path, so `..`, `/` or a NUL cannot.
    public static func isValidID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard bytes.count > 21, bytes[10] == UInt8(ascii: "/"), EventStore.isDayFolder(String(decoding: bytes[..<10], as: UTF8.self)) else { return false }
        let name = bytes[11...].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        func digits(_ part: ArraySlice<UInt8>) -> Bool { !part.isEmpty && part.allSatisfy { (0x30...0x39).contains($0) } }
        guard name.count == 3 || name.count == 4, let clock = Optional(name[0]), clock.count == 10, clock[clock.startIndex + 6] == UInt8(ascii: ".") else { return false }
        let kind = EventKind(rawValue: String(decoding: name[1], as: UTF8.self))
        let rule = name.count == 4 ? kind == .expression && digits(name[3]) && name[3].count <= 3 : true
        return digits(clock.prefix(6)) && digits(clock.suffix(3)) && kind != nil && digits(name[2]) && name[2].count <= 12 && rule
    }
}

/// A moment as the event folder names it, in UTC so that names sort as time does.
struct CivilTime {
    /// `YYYY-MM-DD`.
    let folder: String
    /// `HHMMSS.mmm`.
    let clock: String

    init(unixTime: Double) {
        let milliseconds = Int((unixTime * 1000).rounded(.down))
        let seconds = milliseconds / 1000
        let (days, secondOfDay) = (seconds / 86_400, seconds % 86_400)
        // Howard Hinnant's days-to-civil, for the proleptic Gregorian calendar.
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        folder = "\(year)-\(two(month))-\(two(day))"
        let fraction = milliseconds % 1000
        clock = "\(two(secondOfDay / 3600))\(two(secondOfDay / 60 % 60))\(two(secondOfDay % 60)).\(fraction < 10 ? "00" : fraction < 100 ? "0" : "")\(fraction)"
    }
}

/// Which recorded events to delete, oldest first, so that at most `keep`
/// remain and they take at most `maximumBytes` together. `events`: each
/// event's id and the bytes of its files, in any order.
public func eventsToDelete(_ events: [(id: String, bytes: Int)], keep: Int, maximumBytes: Int) -> [String] {
    let oldestFirst = events.sorted { $0.id < $1.id }
    var total = oldestFirst.reduce(0) { $0 + $1.bytes }
    var remaining = oldestFirst.count
    var doomed: [String] = []
    for event in oldestFirst where remaining > keep || total > maximumBytes {
        doomed.append(event.id)
        remaining -= 1
        total -= event.bytes
    }
    return doomed
}
