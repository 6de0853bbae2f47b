import FoundationEssentials
import EventPictures
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
                let whole = try EventPicture.jpeg(of: frame, crop: nil, with: encoder)
                let crop = faceCrop(around: record.box, frameWidth: frame.image.width, frameHeight: frame.image.height)
                let face = try EventPicture.jpeg(of: frame, crop: crop, with: encoder)
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
        if let whole = try? EventPicture.jpeg(of: frame, crop: nil, with: encoder), (try? EventStore.write(whole, to: snapshot)) != nil {
            environment["SENTRY_SNAPSHOT"] = snapshot
        }
        if let part = try? EventPicture.jpeg(of: frame, crop: crop, with: encoder), (try? EventStore.write(part, to: face)) != nil {
            environment["SENTRY_FACE"] = face
        }
        return (environment, {
            // Whatever the hook left there (or removed itself) goes with the folder.
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] { unlink(directory + "/" + name) }
            rmdir(directory)
        })
    }
}
