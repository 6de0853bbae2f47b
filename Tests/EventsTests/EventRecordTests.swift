import Foundation
import EventPictures
import Geometry
import Testing
@testable import Events

@Suite("Event records: names that sort as time does, face crops, retention")
struct EventRecordTests {
    @Test("an event is named by its UTC day and time to the millisecond, its kind and frame")
    func naming() {
        let record = EventRecord(kind: .lock, unixTime: 1_795_871_568.632, frameTime: 2, frame: 20, box: Box(x: 1, y: 2, width: 3, height: 4), pan: 84, tilt: 90)
        #expect(record.id == "2026-11-28/131248.632-lock-20")
        #expect(CivilTime(unixTime: 0).folder == "1970-01-01" && CivilTime(unixTime: 951_782_400).folder == "2000-02-29")
        #expect(CivilTime(unixTime: 86_399.009).clock == "235959.009")
    }

    @Test("a face crop: twice the box, at least 128 px, inside the frame, on even pixels")
    func crops() {
        #expect(faceCrop(around: Box(x: 300, y: 200, width: 100, height: 100), frameWidth: 640, frameHeight: 480) == Box(x: 250, y: 150, width: 200, height: 200))
        #expect(faceCrop(around: Box(x: 10, y: 10, width: 30, height: 30), frameWidth: 640, frameHeight: 480) == Box(x: 0, y: 0, width: 128, height: 128))
        let edge = faceCrop(around: Box(x: 600, y: 440, width: 41, height: 41), frameWidth: 640, frameHeight: 480)
        #expect(edge.x + edge.width <= 640 && edge.y + edge.height <= 480 && edge.x % 2 == 0 && edge.width % 2 == 0)
        #expect(faceCrop(around: Box(x: 0, y: 0, width: 90, height: 90), frameWidth: 100, frameHeight: 81) == Box(x: 0, y: 0, width: 100, height: 80))
    }

    @Test("retention deletes the oldest until both the count and the size hold")
    func retention() {
        let events = [("2026-11-28/3", 10), ("2026-11-27/9", 10), ("2026-11-28/1", 50), ("2026-11-28/2", 10)].map { (id: $0.0, bytes: $0.1) }
        #expect(eventsToDelete(events, keep: 3, maximumBytes: 1000) == ["2026-11-27/9"])
        #expect(eventsToDelete(events, keep: 10, maximumBytes: 25) == ["2026-11-27/9", "2026-11-28/1"])
        #expect(eventsToDelete(events, keep: 10, maximumBytes: 1000).isEmpty)
    }
}

@Suite("The events folder: whole events, the size cap on a burst, pages of the history")
struct EventStoreTests {
    static func folder(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "sentry-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        return path
    }

    static func record(_ index: Int, kind: EventKind = .lock) -> EventRecord {
        EventRecord(kind: kind, unixTime: 1_795_871_568 + Double(index) * 0.25, frameTime: Double(index), frame: index, box: Box(x: 1, y: 2, width: 3, height: 4), pan: 90, tilt: 90)
    }

    @Test("an id from outside is taken only in the shape the folder names events by")
    func ids() {
        #expect(EventRecord.isValidID(Self.record(3).id))
        #expect(EventRecord.isValidID("2026-11-28/131248.632-expression-12345"))
        var smile = Self.record(3, kind: .expression)
        smile.ruleFired(1, state: "smile", score: 0.8)
        #expect(EventRecord.isValidID(smile.id) && smile.id.hasSuffix("-expression-3-1"), "\(smile.id)")
        for bad in [
            "../../etc/passwd", "2026-11-28/../../etc/passwd", "2026-11-28/131248.632-lock-20/../x", "2026-11-28/131248.632-bomb-20",
            "2026-11-28/131248.632-lock-", "2026-11-28/13124.8632-lock-20", "2026-1-128/131248.632-lock-20", "2026-11-28/131248.632-lock-2\u{0}",
            "2026-11-28/131248.632-lock-20-face", "2026-11-28/131248.632-lock-20-1", "2026-11-28/131248.632-expression-20-1-face", "", "2026-11-28/131248.632-lock-1234567890123",
        ] {
            #expect(!EventRecord.isValidID(bad), "\(bad)")
        }
    }

    @Test("a burst of 200 events never leaves more than the size cap on disk, the newest kept, nothing half-written")
    func burst() throws {
        let directory = Self.folder("burst")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let picture = [UInt8](repeating: 0xAB, count: 10_000)
        let cap = 250_000
        let store = try EventStore(directory: directory, keep: 1000, maximumBytes: cap)
        var largest = 0
        for index in 0..<200 {
            try store.save(Self.record(index), frame: picture, face: picture)
            let bytes = try FileManager.default.subpathsOfDirectory(atPath: directory).reduce(0) { total, path in
                let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + path)
                return total + (attributes[.type] as? FileAttributeType == .typeRegular ? attributes[.size] as? Int ?? 0 : 0)
            }
            largest = max(largest, bytes)
        }
        let ids = store.recordIDs()
        #expect(largest <= cap, "the folder held \(largest) bytes against a cap of \(cap)")
        #expect(ids.count == 12 && ids.last == Self.record(199).id, "\(ids.count) kept, newest \(ids.last ?? "none")")
        #expect(try FileManager.default.subpathsOfDirectory(atPath: directory).allSatisfy { !$0.contains(".tmp") })
    }

    @Test("the retention's index is read from the folder at the first save only, then kept by the store's own saves, in order or not, as the folder is")
    func retentionIndex() throws {
        let directory = Self.folder("index")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let earlier = try EventStore(directory: directory, keep: 100, maximumBytes: 1 << 30)
        for index in 1...5 { try earlier.save(Self.record(index * 10), frame: [UInt8](repeating: 1, count: index), face: [2]) }
        let store = try EventStore(directory: directory, keep: 4, maximumBytes: 1 << 30)
        #expect(store.index.withLock { $0 == nil }, "the folder is read at the first save, not before")
        func indexed() -> [String] { store.index.withLock { ($0 ?? []).map { "\($0.id) \($0.bytes)" } } }
        func onDisk() -> [String] { store.onDisk().map { "\($0.id) \($0.bytes)" } }
        // The events already there count: 5 + 1 > 4, so the two oldest go.
        try store.save(Self.record(60), frame: [1], face: [2])
        #expect(store.recordIDs() == [30, 40, 50, 60].map { Self.record($0).id })
        #expect(indexed() == onDisk())
        // One older than every kept event (a late camera-loss record) is the oldest: it goes at once.
        try store.save(Self.record(5), frame: [1], face: [2])
        #expect(store.recordIDs() == [30, 40, 50, 60].map { Self.record($0).id })
        // One in between takes its place in order, and the oldest goes.
        try store.save(Self.record(45), frame: [UInt8](repeating: 3, count: 7), face: [2])
        #expect(store.recordIDs() == [40, 45, 50, 60].map { Self.record($0).id })
        #expect(indexed() == onDisk() && indexed().count == 4)
    }

    @Test("the history pages newest first: limit, before, and whether more remain")
    func pages() throws {
        let directory = Self.folder("pages")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try EventStore(directory: directory, keep: 100, maximumBytes: 1 << 30)
        for index in 0..<5 { try store.save(Self.record(index), frame: [1], face: [2]) }
        let first = store.history(limit: 2)
        #expect(first.records.map(\.frame) == [4, 3] && first.more)
        let second = store.history(limit: 2, before: first.records.last!.id)
        #expect(second.records.map(\.frame) == [2, 1] && second.more)
        let last = store.history(limit: 2, before: second.records.last!.id)
        #expect(last.records.map(\.frame) == [0] && !last.more)
        #expect(store.records().map(\.frame) == [0, 1, 2, 3, 4])
    }
}
