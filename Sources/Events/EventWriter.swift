import FoundationEssentials
import Geometry
import Glibc
import Imaging
import JPEG
import Logging
import MonotonicTime
import Synchronization
import TextOutput
import Threading

/// Writes events off the frame loop: the frame loop hands over the record
/// and its frame (`submit`, which never waits), a thread of its own crops and
/// encodes the pictures (libjpeg-turbo) and saves them. A burst beyond
/// `pending` events drops the oldest waiting; a folder that cannot be written
/// (a full or read-only disk) is one log line a minute, the events skipped,
/// the turret going on.
public final class EventWriter: Sendable {
    /// Events written, and skipped (dropped from the queue or not written).
    public struct Counts: Sendable, Equatable {
        public var written = 0
        public var skipped = 0
    }

    private struct Waiting {
        var events: [(record: EventRecord, frame: Frame, submitted: Double)] = []
        var stopped = false
        var counts = Counts()
    }

    /// At most this many events wait to be written.
    public static let pending = 8
    private let store: EventStore
    /// Told of each event, with its face's JPEG, once its files are on disk (the console's history, MQTT's picture).
    private let saved: @Sendable (EventRecord, [UInt8]) -> Void
    private let waiting = Mutex(Waiting())
    private let condition = Condition()
    private let done = Condition()
    private let finished = Atomic(false)
    private let logger: Logger

    public init(store: EventStore, logger: Logger, saved: @escaping @Sendable (EventRecord, [UInt8]) -> Void = { _, _ in }) {
        self.store = store
        self.saved = saved
        self.logger = logger
        startThread(named: "sentry-events") { [self] in run() }
    }

    public var counts: Counts { waiting.withLock { $0.counts } }

    /// Queues `record` with its frame; returns at once.
    public func submit(_ record: EventRecord, frame: Frame) {
        var dropped: EventRecord?
        waiting.withLock { waiting in
            if waiting.events.count >= Self.pending {
                dropped = waiting.events.removeFirst().record
                waiting.counts.skipped += 1
            }
            waiting.events.append((record, frame, monotonicSeconds()))
        }
        if let dropped { logger.warning("events: \(dropped.id) dropped, \(Self.pending) events were already waiting to be written") }
        condition.withLock { condition.signal() }
    }

    /// Writes what waits, then stops the thread (at the end of a run).
    public func finish() {
        waiting.withLock { $0.stopped = true }
        condition.withLock { condition.signal() }
        _ = done.wait(seconds: 10) { finished.load(ordering: .relaxed) }
    }

    private func run() {
        defer {
            finished.store(true, ordering: .relaxed)
            done.withLock { done.broadcast() }
        }
        guard let encoder = try? JPEGEncoder(quality: 85) else {
            logger.error("events: libturbojpeg cannot start a compressor; no events are written")
            return
        }
        var lastComplaint = -Double.infinity, unreported = 0
        while true {
            let next: (record: EventRecord, frame: Frame, submitted: Double)? = waiting.withLock { waiting in
                waiting.events.isEmpty ? nil : waiting.events.removeFirst()
            }
            guard let (record, frame, submitted) = next else {
                if waiting.withLock({ $0.stopped }) { return }
                condition.withLock { if waiting.withLock({ $0.events.isEmpty && !$0.stopped }) { condition.wait(seconds: 1) } }
                continue
            }
            do {
                let whole = try Self.encode(frame, crop: nil, with: encoder)
                let face = try Self.encode(
                    frame, crop: faceCrop(around: record.box, frameWidth: frame.image.width, frameHeight: frame.image.height), with: encoder)
                try store.save(record, frame: whole, face: face)
                waiting.withLock { $0.counts.written += 1 }
                saved(record, face)
                logger.debug("events: \(record.id) on disk \(String(printf: "%.1f", (monotonicSeconds() - submitted) * 1000)) ms after its frame was processed")
            } catch {
                waiting.withLock { $0.counts.skipped += 1 }
                unreported += 1
                let now = monotonicSeconds()
                if now - lastComplaint >= 60 {
                    logger.error("events: \(error); \(unreported) event(s) not kept (said at most once a minute)")
                    lastComplaint = now
                    unreported = 0
                }
            }
        }
    }

    /// The frame, or the part of it `crop` names, as JPEG bytes.
    static func encode(_ frame: Frame, crop: Box?, with encoder: JPEGEncoder) throws -> [UInt8] {
        let area = crop ?? Box(x: 0, y: 0, width: frame.image.width, height: frame.image.height)
        let chroma = YUVPicture.chroma(of: frame.chroma?.layout)
        var picture = YUVPicture(width: area.width, height: area.height, chroma: chroma)
        let width = frame.image.width
        for row in 0..<area.height {
            let from = (area.y + row) * width + area.x
            picture.y.replaceSubrange(row * area.width..<(row + 1) * area.width, with: frame.image.pixels[from..<from + area.width])
        }
        if let planes = frame.chroma {
            let (shiftX, shiftY) = planes.layout.shifts
            let planeWidth = (width + (1 << shiftX) - 1) >> shiftX
            let size = YUVPicture.chromaSize(width: area.width, height: area.height, chroma)
            for row in 0..<size.height {
                let from = ((area.y >> shiftY) + row) * planeWidth + (area.x >> shiftX)
                let to = row * size.width
                picture.u.replaceSubrange(to..<to + size.width, with: planes.u[from..<from + size.width])
                picture.v.replaceSubrange(to..<to + size.width, with: planes.v[from..<from + size.width])
            }
        }
        return try encoder.encode(picture) { Array($0) }
    }
}

/// An event's two pictures for a hook (`SENTRY_SNAPSHOT`, `SENTRY_FACE`):
/// written into a private folder of their own before the hook starts and
/// removed with it once the hook has ended, whether or not `--events` keeps
/// the event too.
public enum HookPictures {
    /// Writes them; the environment a hook gets, and what removes them.
    public static func write(_ record: EventRecord, frame: Frame) -> (environment: [String: String], cleanup: @Sendable () -> Void) {
        var environment = ["SENTRY_EVENT_ID": record.id]
        var template = Array("/tmp/sentry-hook-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template), let encoder = try? JPEGEncoder(quality: 85) else { return (environment, {}) }
        let directory = String(cString: made)
        let (snapshot, face) = (directory + "/frame.jpg", directory + "/face.jpg")
        let crop = faceCrop(around: record.box, frameWidth: frame.image.width, frameHeight: frame.image.height)
        if let whole = try? EventWriter.encode(frame, crop: nil, with: encoder), (try? EventStore.write(whole, to: snapshot)) != nil {
            environment["SENTRY_SNAPSHOT"] = snapshot
        }
        if let part = try? EventWriter.encode(frame, crop: crop, with: encoder), (try? EventStore.write(part, to: face)) != nil {
            environment["SENTRY_FACE"] = face
        }
        return (environment, {
            // Whatever the hook left there (or removed itself) goes with the folder.
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] { unlink(directory + "/" + name) }
            rmdir(directory)
        })
    }
}

/// The face of the newest event, encoded on a thread of its own: what MQTT's
/// picture shows when no `--events` folder encodes it already. Newest wins:
/// a face still waiting is replaced, nothing queues, the frame loop never waits.
public final class FacePictures: Sendable {
    private struct Slot {
        var waiting: (record: EventRecord, frame: Frame)?
        var stopped = false
    }

    private let slot = Mutex(Slot())
    private let condition = Condition()

    /// `encoded`: each face's JPEG, on the encoder's thread.
    public init(encoded: @escaping @Sendable ([UInt8]) -> Void) {
        startThread(named: "sentry-faces") { [self] in
            guard let encoder = try? JPEGEncoder(quality: 85) else { return }
            while let (record, frame) = next() {
                let crop = faceCrop(around: record.box, frameWidth: frame.image.width, frameHeight: frame.image.height)
                if let jpeg = try? EventWriter.encode(frame, crop: crop, with: encoder) { encoded(jpeg) }
            }
        }
    }

    /// Hands the event's frame over; returns at once.
    public func submit(_ record: EventRecord, frame: Frame) {
        slot.withLock { $0.waiting = (record, frame) }
        condition.withLock { condition.signal() }
    }

    /// Ends the thread (a face still waiting is not encoded).
    public func stop() {
        slot.withLock { $0.stopped = true }
        condition.withLock { condition.signal() }
    }

    /// The next face to encode; nil once stopped.
    private func next() -> (record: EventRecord, frame: Frame)? {
        while true {
            let (taken, stopped) = slot.withLock { slot in
                defer { slot.waiting = nil }
                return (slot.waiting, slot.stopped)
            }
            if stopped { return nil }
            if let taken { return taken }
            condition.withLock { if slot.withLock({ $0.waiting == nil && !$0.stopped }) { condition.wait(seconds: 1) } }
        }
    }
}
