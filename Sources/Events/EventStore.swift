import FoundationEssentials
import Glibc
import Synchronization

/// Why the event folder cannot be used or an event not written, in one line.
public struct EventStoreError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The events folder (`--events DIR`): one folder per day, each event's
/// frame, face crop and JSON record named alike, each file written under a
/// temporary name and renamed (the record last: an event with a record is
/// whole). After each event the oldest go until at most `keep` remain in at
/// most `maximumBytes`.
public final class EventStore: Sendable {
    public let directory: String
    public let keep: Int
    public let maximumBytes: Int
    /// The whole events and their bytes, oldest first: read from the folder at the first
    /// save, then kept up to date by this store's own saves and deletions, so the
    /// retention after each event neither lists nor stats the whole folder.
    let index = Mutex<[(id: String, bytes: Int)]?>(nil)

    /// An existing folder, to read (`sentry events`).
    public init(reading directory: String) throws(EventStoreError) {
        var status = stat()
        guard stat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw EventStoreError("events folder \(directory): no such folder; pass the one sentry run --events writes to with --events")
        }
        (self.directory, keep, maximumBytes) = (directory, .max, .max)
    }

    /// Creates the folder if needed; refuses one that cannot be written.
    public init(directory: String, keep: Int, maximumBytes: Int) throws(EventStoreError) {
        self.directory = directory
        self.keep = keep
        self.maximumBytes = maximumBytes
        guard Self.makeDirectory(directory) else {
            throw EventStoreError("events folder \(directory): cannot create it (\(String(cString: strerror(errno)))); pass a folder sentry may write to with --events")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw EventStoreError("events folder \(directory): not writable by this user; pass another with --events, or fix its owner")
        }
    }

    /// The paths an event's files have.
    public func paths(of id: String) -> (record: String, frame: String, face: String) {
        let base = directory + "/" + id
        return (base + ".json", base + ".jpg", base + "-face.jpg")
    }

    /// Writes one event's pictures and record, then applies the retention.
    public func save(_ record: EventRecord, frame: [UInt8], face: [UInt8]) throws(EventStoreError) {
        let paths = paths(of: record.id)
        let day = String(paths.record[..<paths.record.lastIndex(of: "/")!])
        guard Self.makeDirectory(day) else { throw EventStoreError("events folder \(day): \(String(cString: strerror(errno)))") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(record) else { throw EventStoreError("event \(record.id) cannot be encoded") }
        do {
            try Self.write(face, to: paths.face)
            try Self.write(frame, to: paths.frame)
            try Self.write(Array(json) + [0x0A], to: paths.record)
        } catch {
            for path in [paths.face, paths.frame, paths.record] { unlink(path) }
            throw error
        }
        applyRetention(adding: (record.id, json.count + 1 + frame.count + face.count))
    }

    /// Every whole event (one with its record), oldest first.
    public func recordIDs() -> [String] {
        let days = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var ids: [String] = []
        for day in days where Self.isDayFolder(day) {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + day)) ?? []
            for file in files where file.hasSuffix(".json") && !file.hasPrefix(".") { ids.append(day + "/" + file.dropLast(5)) }
        }
        return ids.sorted()
    }

    /// Every whole event's record, oldest first (a record that cannot be read is skipped).
    public func records() -> [EventRecord] { history(limit: .max).records.reversed() }

    /// A page of the history, newest first: at most `limit` whole events older
    /// than `before` (from the newest when nil), and whether older ones remain.
    public func history(limit: Int, before: String? = nil) -> (records: [EventRecord], more: Bool) {
        var ids = recordIDs()
        if let before { ids = ids.filter { $0 < before } }
        let decoder = JSONDecoder()
        var records: [EventRecord] = []
        var remaining = ids.reversed()[...]
        while records.count < limit, let id = remaining.popFirst() {
            guard let data = FileManager.default.contents(atPath: paths(of: id).record), let record = try? decoder.decode(EventRecord.self, from: data) else {
                continue
            }
            records.append(record)
        }
        return (records, !remaining.isEmpty)
    }

    /// Counts in the event just saved, then deletes the oldest events beyond `keep` and `maximumBytes`, and empty day folders.
    func applyRetention(adding saved: (id: String, bytes: Int)) {
        let doomed = index.withLock { index -> [String] in
            var events = index ?? onDisk()
            if index != nil {
                events.insert(saved, at: events.lastIndex { $0.id < saved.id }.map { $0 + 1 } ?? 0)
            }
            let doomed = eventsToDelete(events, keep: keep, maximumBytes: maximumBytes)
            let deleted = Set(doomed)
            index = events.filter { !deleted.contains($0.id) }
            return doomed
        }
        for id in doomed {
            let paths = paths(of: id)
            // The record first: an event without one is not listed, whatever is left of it.
            for path in [paths.record, paths.frame, paths.face] { unlink(path) }
            rmdir(directory + "/" + id.prefix { $0 != "/" })
        }
    }

    /// Every whole event in the folder with its bytes, oldest first.
    func onDisk() -> [(id: String, bytes: Int)] {
        recordIDs().map { id in
            let paths = paths(of: id)
            return (id, [paths.record, paths.frame, paths.face].reduce(0) { $0 + Self.size(of: $1) })
        }
    }

    static func isDayFolder(_ name: String) -> Bool {
        name.utf8.count == 10 && name.utf8.enumerated().allSatisfy { index, byte in
            index == 4 || index == 7 ? byte == UInt8(ascii: "-") : (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
    }

    static func size(of path: String) -> Int {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : 0
    }

    static func makeDirectory(_ path: String) -> Bool {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o750) != 0, errno != EEXIST { return false }
        }
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// `bytes` into `path` through a temporary file in the same folder, renamed when whole.
    static func write(_ bytes: [UInt8], to path: String) throws(EventStoreError) {
        let slash = path.lastIndex(of: "/")!
        let temporary = String(path[...slash]) + "." + String(path[path.index(after: slash)...]) + ".tmp"
        let file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        guard file >= 0 else { throw EventStoreError("\(path): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(file, $0.baseAddress! + written, bytes.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                close(file)
                unlink(temporary)
                throw EventStoreError("\(path): \(reason)")
            }
            written += count
        }
        guard close(file) == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw EventStoreError("\(path): \(reason)")
        }
    }
}
