import Events
import FoundationEssentials
import Glibc
import Imaging
import JPEG
import MonotonicTime
import Synchronization
import Threading
import Video

/// One encoded frame of the video stream.
public struct JPEGFrame: Sendable {
    public var bytes: [UInt8]
    public var frame: Int
    /// Seconds since the source started.
    public var time: Double
    /// When the frame was read from the source (monotonic seconds).
    public var capturedAt: Double
}

/// Where the frame loop and the web server meet. The frame loop publishes
/// each frame's status (and, while someone watches, its pixels) and never
/// waits; the server's connections read the newest state and wait for the
/// next change. Slow viewers skip frames: nothing queues.
public final class ConsoleHub: Sendable {
    /// At most this many video frames a second (`--web-fps`).
    public let framesPerSecond: Double
    private let state = Mutex(State())
    /// Connections wait on it for the next change.
    private let changed = Condition()
    private let encoder: FrameEncoder

    struct State {
        var status: FrameStatus?
        var events: [ConsoleEvent] = []
        var nextEvent = 1
        /// The events kept on disk lately (`--events`), newest last, numbered from 1.
        var kept: [EventRecord] = []
        var keptCount = 0
        var jpeg: JPEGFrame?
        var framesEncoded = 0
        var viewers = 0
        /// Closed: connections end their streams.
        var closed = false
        var nextOffer = 0.0
        /// Bumped by every change a connection may wait for.
        var version = 0
        var encodeTimes = RecentSamples(capacity: 300)
        var latencies = RecentSamples(capacity: 300)
    }

    /// How many events the log keeps.
    static let eventCapacity = 500

    public init(framesPerSecond: Double = 15, quality: Int = 80) throws(JPEGError) {
        self.framesPerSecond = framesPerSecond
        encoder = try FrameEncoder(quality: quality)
        encoder.start(hub: self)
    }

    /// Stops the encoder thread and ends every stream.
    public func close() {
        state.withLock { $0.closed = true }
        encoder.stop()
        wakeWaiters()
    }

    /// Closed: streams end (sentry is stopping).
    public var isClosed: Bool { state.withLock { $0.closed } }

    // MARK: The frame loop's side (never blocks)

    /// Publishes a processed frame; its pixels go to the encoder only while
    /// someone watches, at most `framesPerSecond` times a second.
    public func publish(_ status: FrameStatus, frame: Frame, capturedAt: Double) {
        let wantsPicture = state.withLock { state -> Bool in
            for (kind, text) in EventDerivation.events(from: state.status, to: status) {
                Self.append(kind, text, time: status.time, to: &state)
            }
            state.status = status
            state.version += 1
            guard state.viewers > 0, capturedAt >= state.nextOffer else { return false }
            let interval = 1 / framesPerSecond
            // On schedule (with a quarter-frame of slack), or restart it after a pause.
            state.nextOffer = max(state.nextOffer + interval, capturedAt + interval * 0.75)
            return true
        }
        if wantsPicture { encoder.offer(frame, capturedAt: capturedAt) }
        wakeWaiters()
    }

    /// Adds a line to the event log (settings changed, camera lost…).
    public func log(_ kind: String, _ text: String) {
        state.withLock { state in
            Self.append(kind, text, time: state.status?.time ?? 0, to: &state)
            state.version += 1
        }
        wakeWaiters()
    }

    /// An event's files are on disk (`--events`): viewers' history shows it.
    public func kept(_ record: EventRecord) {
        state.withLock { state in
            state.kept.append(record)
            state.keptCount += 1
            if state.kept.count > Self.keptCapacity { state.kept.removeFirst() }
            state.version += 1
        }
        wakeWaiters()
    }

    /// How many kept events a viewer who fell behind may catch up on.
    static let keptCapacity = 20

    /// The events kept after the `count`th, and how many have been kept so far.
    public func kept(after count: Int) -> (records: [EventRecord], count: Int) {
        state.withLock { state in (Array(state.kept.suffix(min(state.kept.count, max(0, state.keptCount - count)))), state.keptCount) }
    }

    private static func append(_ kind: String, _ text: String, time: Double, to state: inout State) {
        state.events.append(ConsoleEvent(sequence: state.nextEvent, time: time, kind: kind, text: text))
        state.nextEvent += 1
        if state.events.count > eventCapacity { state.events.removeFirst(state.events.count - eventCapacity) }
    }

    // MARK: The encoder's side

    func encoded(_ jpeg: JPEGFrame, seconds: Double) {
        state.withLock { state in
            state.jpeg = jpeg
            state.framesEncoded += 1
            state.encodeTimes.add(seconds)
            state.version += 1
        }
        wakeWaiters()
    }

    // MARK: The server's side

    /// The newest frame's status.
    public var status: FrameStatus? { state.withLock { $0.status } }

    /// The newest encoded frame.
    public var jpeg: JPEGFrame? { state.withLock { $0.jpeg } }

    /// The log's lines after `sequence` (all kept ones for 0).
    public func events(after sequence: Int) -> [ConsoleEvent] {
        state.withLock { state in state.events.filter { $0.sequence > sequence } }
    }

    /// The sequence number of the newest log line (0 before the first).
    public var newestEvent: Int { state.withLock { $0.nextEvent - 1 } }

    /// The current change counter.
    public var version: Int { state.withLock { $0.version } }

    /// Returns once something changed after `version`, or after about a
    /// second regardless (so connections can send keep-alives and notice
    /// viewers that left).
    public func waitForChange(after version: Int) {
        // Checked and waited for under `changed`'s mutex, which `wakeWaiters` takes
        // to broadcast: a change between the check and the wait cannot be missed.
        changed.withLock {
            let unchanged = state.withLock { $0.version <= version && !$0.closed }
            if unchanged { changed.wait(seconds: 1.5) }
        }
    }

    /// Wakes every waiting connection.
    func wakeWaiters() {
        changed.withLock { changed.broadcast() }
    }

    /// A video viewer arrived (frames are encoded while there is one).
    public func viewerJoined() { state.withLock { $0.viewers += 1 } }

    public func viewerLeft() { state.withLock { $0.viewers -= 1 } }

    /// A viewer's socket took `jpeg`: records capture-to-viewer latency.
    public func delivered(_ jpeg: JPEGFrame) {
        let latency = monotonicSeconds() - jpeg.capturedAt
        state.withLock { $0.latencies.add(latency) }
    }

    /// The stream's figures so far.
    public var figures: StreamFigures {
        state.withLock { state in
            StreamFigures(
                viewers: state.viewers, framesEncoded: state.framesEncoded,
                encodeMs: state.encodeTimes.percentile(0.5) * 1000,
                latencyMs: state.latencies.percentile(0.5) * 1000, latencyP99Ms: state.latencies.percentile(0.99) * 1000,
                jpegBytes: state.jpeg?.bytes.count ?? 0)
        }
    }
}

/// Encodes frames to JPEG on a thread of its own. The frame loop hands a
/// frame over by copying its planes into a waiting slot (newest wins, no
/// queue) and goes on; the thread wakes at least once a second to let
/// waiting connections look around.
final class FrameEncoder: @unchecked Sendable {
    private let condition = Condition()
    private var waiting: YUVPicture?
    private var waitingMeta: (frame: Int, time: Double, capturedAt: Double) = (0, 0, 0)
    private var spare: YUVPicture?
    private var stopped = false
    private let jpeg: JPEGEncoder

    /// The encoder thread's nice value (0 is the frame loop's, 19 the lowest).
    static let niceness: Int32 = 10

    init(quality: Int) throws(JPEGError) {
        jpeg = try JPEGEncoder(quality: quality)
    }

    func start(hub: ConsoleHub) {
        startThread(named: "sentry-jpeg") { [self] in
            // Below the frame loop and the detector's threads: on a board with
            // few cores the picture for a viewer waits, the detection does not.
            // (On Linux the nice value is the calling thread's own.)
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
            run(hub: hub)
        }
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// Copies `frame`'s planes into the slot; a frame still waiting there is replaced.
    func offer(_ frame: Frame, capturedAt: Double) {
        condition.lock()
        defer { condition.unlock() }
        let chroma = YUVPicture.chroma(of: frame.chroma?.layout)
        // Reuse the waiting picture or the spare one, taken out first so that
        // writing into it copies nothing.
        var picture: YUVPicture
        if let taken = waiting {
            picture = taken
            waiting = nil
        } else if let taken = spare {
            picture = taken
            spare = nil
        } else {
            picture = YUVPicture(width: frame.image.width, height: frame.image.height, chroma: chroma)
        }
        if picture.width != frame.image.width || picture.height != frame.image.height || picture.chroma != chroma {
            picture = YUVPicture(width: frame.image.width, height: frame.image.height, chroma: chroma)
        }
        picture.y.withUnsafeMutableBufferPointer { y in
            frame.image.pixels.withUnsafeBufferPointer { y.baseAddress!.update(from: $0.baseAddress!, count: $0.count) }
        }
        if let planes = frame.chroma {
            picture.u.withUnsafeMutableBufferPointer { u in planes.u.withUnsafeBufferPointer { u.baseAddress!.update(from: $0.baseAddress!, count: $0.count) } }
            picture.v.withUnsafeMutableBufferPointer { v in planes.v.withUnsafeBufferPointer { v.baseAddress!.update(from: $0.baseAddress!, count: $0.count) } }
        }
        waiting = picture
        waitingMeta = (frame.index, frame.timestamp, capturedAt)
        condition.signal()
    }

    private func run(hub: ConsoleHub) {
        while true {
            condition.lock()
            if waiting == nil && !stopped { condition.wait(seconds: 1) }
            if stopped {
                condition.unlock()
                return
            }
            let picture = waiting, meta = waitingMeta
            waiting = nil
            condition.unlock()
            guard let picture else {
                hub.wakeWaiters()
                continue
            }
            let start = monotonicSeconds()
            if let bytes = try? jpeg.encode(picture) {
                hub.encoded(
                    JPEGFrame(bytes: bytes, frame: meta.frame, time: meta.time, capturedAt: meta.capturedAt),
                    seconds: monotonicSeconds() - start)
            }
            condition.lock()
            if spare == nil { spare = picture }
            condition.unlock()
        }
    }
}
