#if canImport(Glibc)
    import Glibc
#endif
import FoundationEssentials
import Logging
import MonotonicTime
import Synchronization
import TextOutput
import Threading

/// Watches the frame loop from a thread of its own: a step of the loop that
/// takes over a second is logged while it lasts, with the step's name and
/// what the kernel says the loop's thread is doing (blocked in a system call,
/// or running), so a stall is found from a user's log rather than
/// reproduced. A step slow only because its thread waited for a CPU behind
/// other work (the kernel's run-queue time, /proc's schedstat) is a busy
/// machine, not a stall of the loop: it is logged as that, apart, so a stall
/// always means the loop itself computed or blocked that long.
/// At the end of the run it logs the longest gap between frames
/// and the median and 99th percentile of a frame's work (the pipeline and
/// the observers, not the wait for the camera).
///
/// The loop marks each step with `enter`, two atomic stores; everything
/// slow (reading /proc, logging) happens on the watchdog's thread.
final class FrameLoopWatchdog: Sendable {
    /// What the loop is doing.
    enum Step: Sendable, Equatable {
        case waitingForFrame, pipeline, reopeningCamera, finishing
        /// Observer number `index`, in the order registered.
        case observer(Int)

        var code: Int {
            switch self {
            case .waitingForFrame: -1
            case .pipeline: -2
            case .reopeningCamera: -3
            case .finishing: -4
            case .observer(let index): index
            }
        }

        init(code: Int) {
            self =
                switch code {
                case -1: .waitingForFrame
                case -2: .pipeline
                case -3: .reopeningCamera
                case -4: .finishing
                default: .observer(code)
                }
        }
    }

    /// A step over this many seconds is a stall (by default: a camera's frame
    /// takes a thirtieth of a second, so a second is clearly wrong).
    static let defaultStallSeconds = 1.0
    let stallSeconds: Double
    /// After a stall is logged, the next is only counted for this long, so a
    /// machine too slow for its camera's rate is told once a minute, not every frame.
    static let quietSeconds = 60.0

    private let logger: Logger
    private let observerNames: [String]
    /// The loop's thread, as /proc names it (`PID/task/TID`).
    private let threadPath: String
    private let stepCode = Atomic<Int>(-1)
    /// When the current step began, in monotonic nanoseconds.
    private let stepStart = Atomic<Int>(0)
    private let running = Atomic(true)
    private let stopped = Condition()
    private let done = Atomic(false)
    /// Frame-thread bookkeeping for the longest gap (only the loop touches it).
    private let gaps = Mutex(Gaps())

    private struct Gaps {
        var lastFrameEnd: Double?
        var frames = 0
        var longest = 0.0
        var longestAtFrame = 0
        /// The longest single step of the current frame, and of the longest gap's.
        var frameSlowest: (step: Step, seconds: Double) = (.waitingForFrame, 0)
        var longestSlowest: (step: Step, seconds: Double) = (.waitingForFrame, 0)
        /// When the current frame's work began (the pipeline step), and every frame's work so far.
        var workStart: Int?
        var work = DurationHistogram()
    }

    /// Starts watching the calling thread, which runs the loop; `observerNames`
    /// name the observers' steps; a step longer than `stallSeconds` is logged.
    init(observerNames: [String], stallSeconds: Double = FrameLoopWatchdog.defaultStallSeconds, logger: Logger) {
        self.stallSeconds = stallSeconds
        self.logger = logger
        self.observerNames = observerNames
        threadPath = Self.currentThreadPath()
        stepStart.store(Self.now(), ordering: .relaxed)
        startThread(named: "loop-watchdog") { [self] in
            watch()
            stopped.withLock {
                done.store(true, ordering: .relaxed)
                stopped.broadcast()
            }
        }
    }

    /// The loop begins `step` now.
    func enter(_ step: Step) {
        let now = Self.now()
        let seconds = Double(now - stepStart.load(ordering: .relaxed)) / 1e9
        gaps.withLock { gaps in
            if seconds > gaps.frameSlowest.seconds { gaps.frameSlowest = (self.step, seconds) }
            if step == .pipeline { gaps.workStart = now }
        }
        stepCode.store(step.code, ordering: .relaxed)
        stepStart.store(now, ordering: .relaxed)
    }

    /// A frame went through the pipeline and the observers.
    func frameDone() {
        let end = Self.now()
        enter(.waitingForFrame)
        let now = monotonicSeconds()
        gaps.withLock { gaps in
            gaps.frames += 1
            if let start = gaps.workStart { gaps.work.add(Double(end - start) / 1e9) }
            gaps.workStart = nil
            if let last = gaps.lastFrameEnd, now - last > gaps.longest {
                gaps.longest = now - last
                gaps.longestAtFrame = gaps.frames
                gaps.longestSlowest = gaps.frameSlowest
            }
            gaps.lastFrameEnd = now
            gaps.frameSlowest = (.waitingForFrame, 0)
        }
    }

    /// The camera was lost: the loop waits for it (it logs that itself), and
    /// the time without it is no gap between frames.
    func cameraLost() {
        enter(.reopeningCamera)
        gaps.withLock { $0.lastFrameEnd = nil }
    }

    /// Stops the watchdog's thread and logs the longest gap between frames.
    func stop() {
        enter(.finishing)
        stopped.withLock {
            running.store(false, ordering: .relaxed)
            stopped.broadcast()
        }
        _ = stopped.wait(seconds: 2) { done.load(ordering: .relaxed) }
        let gaps = gaps.withLock { $0 }
        guard gaps.frames > 1 else { return }
        let (median, p99) = (gaps.work.percentile(0.5) * 1000, gaps.work.percentile(0.99) * 1000)
        // At the default level: the guides point a user here to see what a frame costs.
        logger.notice(
            "frame loop: \(gaps.frames) frames, work per frame \(String(printf: "%.2f", median)) ms median, \(String(printf: "%.2f", p99)) ms p99, longest gap \(String(printf: "%.2f", gaps.longest)) s before frame \(gaps.longestAtFrame) (\(String(printf: "%.2f", gaps.longestSlowest.seconds)) s of it \(describe(gaps.longestSlowest.step)))"
        )
    }

    private var step: Step { Step(code: stepCode.load(ordering: .relaxed)) }

    private func watch() {
        var watched = WatchedStep(start: 0, queuedAtStart: 0)
        var last = (time: Self.now(), queued: queuedSeconds())
        var stallReports = ReportPacing(), busyReports = ReportPacing()
        while running.load(ordering: .relaxed) {
            _ = stopped.wait(seconds: min(0.25, stallSeconds / 4)) { !running.load(ordering: .relaxed) }
            let start = stepStart.load(ordering: .relaxed), step = step
            let sample = (time: Self.now(), queued: queuedSeconds())
            defer { last = sample }
            if start != watched.start {
                // The run-queue time when the step began, between the last two samples.
                let share = sample.time > last.time ? min(max(Double(start - last.time) / Double(sample.time - last.time), 0), 1) : 1
                watched = WatchedStep(start: start, queuedAtStart: last.queued + (sample.queued - last.queued) * share)
            }
            let seconds = Double(sample.time - start) / 1e9
            guard seconds > stallSeconds, step != .reopeningCamera, step != .finishing else { continue }
            let queued = max(0, sample.queued - watched.queuedAtStart)
            // Stalled: longer than the stall time even without the wait for a CPU.
            let stalled = seconds - queued > stallSeconds
            guard stalled ? !watched.reportedStall : !watched.reportedBusy else { continue }
            if stalled { watched.reportedStall = true } else { watched.reportedBusy = true }
            let now = monotonicSeconds()
            guard let more = stalled ? stallReports.report(at: now) : busyReports.report(at: now) else { continue }
            let took = "over \(String(printf: "%.1f", seconds)) s \(describe(step))"
            let waited = "\(String(printf: "%.1f", queued)) s of it waiting for a CPU"
            if stalled {
                logger.warning("frame loop stalled: \(took); the thread is \(kernelState()) (\(waited))\(more)")
            } else {
                logger.warning("frame loop slowed by a busy machine: \(took), \(waited) behind other work\(more)")
            }
        }
    }

    /// One kind of report, told at most once per `quietSeconds`; the ones held
    /// back in between are counted in the next.
    private struct ReportPacing {
        var last = -Double.infinity
        var heldBack = 0

        /// The report's ending now (" (N more since the last report)", or empty), or nil to hold it back.
        mutating func report(at now: Double) -> String? {
            guard now - last >= FrameLoopWatchdog.quietSeconds else {
                heldBack += 1
                return nil
            }
            defer { (last, heldBack) = (now, 0) }
            return heldBack > 0 ? " (\(heldBack) more since the last report)" : ""
        }
    }

    /// The step the watchdog sees, and what it has said of it.
    private struct WatchedStep {
        var start: Int
        var queuedAtStart: Double
        var reportedStall = false
        var reportedBusy = false
    }

    /// Seconds the loop's thread has waited on a run queue for a CPU, from
    /// /proc's schedstat (its second field, in nanoseconds); 0 where the
    /// kernel keeps none, so every slow step then counts as a stall.
    private func queuedSeconds() -> Double {
        guard let line = try? String(contentsOfFile: "/proc/\(threadPath)/schedstat", encoding: .utf8) else { return 0 }
        let fields = line.split(separator: " ")
        return fields.count >= 2 ? (Double(fields[1]) ?? 0) / 1e9 : 0
    }

    private func describe(_ step: Step) -> String {
        switch step {
        case .waitingForFrame: "waiting for the camera's next frame"
        case .pipeline: "in the pipeline (detection, tracking, the serial write)"
        case .reopeningCamera: "reopening the camera"
        case .finishing: "finishing"
        case .observer(let index): "in the observer \(index < observerNames.count ? observerNames[index] : "#\(index)")"
        }
    }

    /// What the kernel says the loop's thread is doing: in a system call
    /// (its number and the kernel function it sleeps in), or running.
    private func kernelState() -> String {
        func read(_ name: String) -> String? {
            (try? String(contentsOfFile: "/proc/\(threadPath)/\(name)", encoding: .utf8))?.trimmed()
        }
        guard let syscall = read("syscall") else { return "(unknown: /proc is not readable)" }
        if syscall == "running" { return "running (computing, not blocked in the kernel)" }
        let number = syscall.split(separator: " ").first.map(String.init) ?? syscall
        let wchan = read("wchan").flatMap { $0 == "0" || $0.isEmpty ? nil : $0 }
        return "blocked in system call \(number)\(wchan.map { " at \($0)" } ?? "")"
    }

    private static func now() -> Int { Int(monotonicSeconds() * 1e9) }

    /// `PID/task/TID` of the calling thread, from /proc/thread-self.
    private static func currentThreadPath() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard count > 0 else { return "self" }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Durations from 10 µs to over a minute in buckets 2 % apart: a run's
/// percentiles in a fixed 7 KB, however long it runs.
struct DurationHistogram {
    static let smallest = 1e-5
    static let ratio = 1.02
    private var counts = [Int](repeating: 0, count: 800)
    private(set) var total = 0

    mutating func add(_ seconds: Double) {
        let bucket = seconds <= Self.smallest ? 0 : Int((log(seconds / Self.smallest) / log(Self.ratio)).rounded(.up))
        counts[min(bucket, counts.count - 1)] += 1
        total += 1
    }

    /// The duration below which `fraction` of those added lie (the upper edge of its bucket); 0 before any.
    func percentile(_ fraction: Double) -> Double {
        guard total > 0 else { return 0 }
        let wanted = max(1, Int((fraction * Double(total)).rounded(.up)))
        var seen = 0
        for (bucket, count) in counts.enumerated() {
            seen += count
            if seen >= wanted { return Self.smallest * pow(Self.ratio, Double(bucket)) }
        }
        return Self.smallest * pow(Self.ratio, Double(counts.count - 1))
    }
}
