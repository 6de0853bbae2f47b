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
