import CoreAffinity
import Foundation
import Synchronization

/// Helper threads for `Interpreter.invoke()`.
///
/// A split step is cut into parts (a few dozen), and every thread, the caller
/// included, claims a run of unclaimed parts until none is left, each claim a
/// share of what is left: the first claims are large (few hand-overs), the
/// last are single parts, so neither thread waits long for the other at the
/// end of a step. A helper that is still waking up, or that the scheduler has
/// taken off its core for another thread, delays the step by at most the claim
/// it holds: the caller does the rest itself instead of spinning until the
/// helper is back.
///
/// Between steps a helper spins up to `spinNanoseconds` for the next one
/// (yielding its core at each look after the first microseconds), then parks
/// on a condition until `run` wakes it (or `wakeAhead`, shortly before one):
/// the short gaps inside a network run (the caller's last part, a step too
/// small to share) cost no wake-up, which takes tens of microseconds on a
/// virtual machine. At the end of a run the caller sends the helpers to rest
/// (`rest`): they park at once, so waiting for the next frame costs no CPU at
/// all. Nothing is allocated per frame.
///
/// Parked helpers may not run on the caller's core (`keepHelpersOffCallersCore`):
/// left to itself, the kernel of this virtual machine woke a helper there, behind
/// the busy caller, in 70-85% of the runs of some phases, and it joined the run
/// milliseconds late, when the network was half done.
final class WorkerPool: @unchecked Sendable {
    /// Parts `parts` of the `count` that step `step` is cut into; called concurrently for disjoint parts.
    typealias Work = @Sendable (_ step: Int, _ parts: Range<Int>, _ count: Int) -> Void

    let helpers: Int
    private let work: Work
    /// The step on offer, a `Ticket`'s bits.
    private let ticket = Atomic<Int>(0)
    /// Parts of the current step that have finished.
    private let finished = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// Helpers asleep on `wake`, to be woken when the next step comes.
    private let parked = Atomic<Int>(0)
    /// Calls to `wakeAhead`: a parked helper wakes when this changes, as for a new step.
    private let alerts = Atomic<Int>(0)
    /// How many helpers are asleep now.
    var parkedHelpers: Int { parked.load(ordering: .relaxed) }
    private let wake = NSCondition()
    private let exited = DispatchSemaphore(value: 0)
    private var generation = 0
    /// The helpers' kernel thread ids, for their allowed cores.
    let helperThreads = Mutex<[pid_t]>([])
    /// The core the helpers were last kept off (-1 before the first wake, or with one core allowed).
    private(set) var avoidedCore = -1

    /// How long a helper looks for the next step before it parks. At 2,000 polls
    /// (about 2 µs here) helpers parked some 27 times per BlazeFace run and the
    /// two-thread network took 1.15x LiteRT's time; at 20 µs, 3 times and 1.0x,
    /// for the same CPU per frame (the parking and waking cost what the spin does).
    static let spinNanoseconds: UInt64 = 20_000
    /// `spinNanoseconds`, or another for tests.
    private let spinLimit: UInt64
    /// Polls (about 2 µs) before a waiting thread yields its core at each look:
    /// the caller, waiting for a helper's last part, and a helper, waiting for
    /// the next step. When the two share a core (a video decoder in another
    /// process holding the other), spinning would keep the one that has work
    /// off it. Without the helper's yield, waking it preempted the caller on
    /// its core: in the 30 fps pipeline the helper parked 1,130 times a second,
    /// and two threads cost 1.16x one thread's CPU; with it, 60 times and 1.08x.
    static let pollsBeforeYield = 2048
    /// The most parts a step is cut into (the ticket's field is 8 bits).
    static let maximumParts = 255

    init(helpers: Int, spinNanoseconds: UInt64 = WorkerPool.spinNanoseconds, work: @escaping Work) {
        self.helpers = helpers
        self.work = work
        spinLimit = spinNanoseconds
        for part in 1...max(helpers, 1) where helpers > 0 {
            let name = "sentry-tflite-\(part)"
            let thread = Thread { [unowned self] in
                Self.nameKernelThread(name)
                self.helperThreads.withLock { $0.append(currentThreadID()) }
                self.loop()
            }
            thread.name = name
            thread.start()
        }
    }

    /// Gives the calling thread `name` in the kernel (15 bytes at most), so
    /// that top and /proc show whose thread it is (Foundation's name is its own).
    static func nameKernelThread(_ name: String) {
        let file = open("/proc/thread-self/comm", O_WRONLY)
        guard file >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        close(file)
    }

    /// Runs every part of step `index` (cut into `parts`, at most
    /// `maximumParts`), here and on the helpers; returns when all are done.
    func run(step index: Int, parts: Int) {
        precondition((1...Self.maximumParts).contains(parts) && (0..<65536).contains(index))
        finished.store(0, ordering: .relaxed)
        offer(step: index, parts: parts)
        if parked.load(ordering: .sequentiallyConsistent) > 0 {
            keepHelpersOffCallersCore()
            wakeAll()
        }
        claimParts(fromStart: true)
        var polls = 0
        while finished.load(ordering: .acquiring) < parts {
            // The last parts are on helpers; if one of them lost its core,
            // give the core back rather than spin through its time slice.
            polls += 1
            if polls > Self.pollsBeforeYield { sched_yield() }
        }
    }

    /// Wakes parked helpers for a `run` that comes within about a wake-up's time
    /// (tens of microseconds here): they look for it for `spinNanoseconds`, then
    /// park again.
    func wakeAhead() {
        guard parked.load(ordering: .sequentiallyConsistent) > 0 else { return }
        keepHelpersOffCallersCore()
        alerts.add(1, ordering: .sequentiallyConsistent)
        wakeAll()
    }

    /// Sends the helpers to park now rather than after `spinNanoseconds`: the
    /// run is over and the next one is a frame away. A ticket without parts.
    func rest() { offer(step: 0, parts: 0) }

    /// Puts a new ticket on offer, of a new generation, so that helpers see it even for
    /// the same step. Sequentially consistent with the helper's park: either it sees
    /// the new ticket, or `run` sees it parked and wakes it.
    private func offer(step: Int, parts: Int) {
        generation = (generation + 1) & 0x7F_FFFF  // 23 bits: the ticket stays positive
        ticket.store(Ticket(generation: generation, step: step, parts: parts).bits, ordering: .sequentiallyConsistent)
    }

    /// Claims and runs parts of the step on offer until none is left: the
    /// caller from the start, the helpers from the end, so that each thread
    /// mostly works on the same part of the image from one step to the next
    /// (in its own cache) and they meet wherever the work evens out. Each
    /// claim takes 1/(threads + 1) of the parts left, at least one.
    private func claimParts(fromStart: Bool) {
        var current = Ticket(bits: ticket.load(ordering: .acquiring))
        while true {
            let (parts, started, fromEnd) = (current.parts, current.claimedFromStart, current.claimedFromEnd)
            guard started + fromEnd < parts else { return }
            let size = max(1, (parts - started - fromEnd) / (helpers + 2))
            let claim = current.claiming(size, fromStart: fromStart)
            let (exchanged, original) = ticket.compareExchange(expected: current.bits, desired: claim.bits, ordering: .acquiringAndReleasing)
            guard exchanged else {
                current = Ticket(bits: original)
                continue
            }
            work(current.step, fromStart ? started ..< started + size : parts - fromEnd - size ..< parts - fromEnd, parts)
            finished.add(size, ordering: .releasing)
            current = claim
        }
    }

    private func loop() {
        var seen = 0
        var resting = false
        while !stopping.load(ordering: .acquiring) {
            var spins = 0
            var spinStart = DispatchTime.now().uptimeNanoseconds
            while Ticket(bits: ticket.load(ordering: .acquiring)).generation == seen, !stopping.load(ordering: .acquiring) {
                spins += 1
                // The clock (and the yield) every 256 polls (a few hundred nanoseconds).
                guard resting || spins % 256 == 0 else { continue }
                if spins >= Self.pollsBeforeYield { sched_yield() }
                guard resting || DispatchTime.now().uptimeNanoseconds - spinStart >= spinLimit else { continue }
                // Park: say so first, then look again under the lock, so a
                // step handed out in between is never missed.
                wake.lock()
                parked.add(1, ordering: .sequentiallyConsistent)
                let alerted = alerts.load(ordering: .sequentiallyConsistent)
                while Ticket(bits: ticket.load(ordering: .sequentiallyConsistent)).generation == seen,
                      alerts.load(ordering: .sequentiallyConsistent) == alerted, !stopping.load(ordering: .acquiring) {
                    wake.wait()
                }
                parked.subtract(1, ordering: .sequentiallyConsistent)
                wake.unlock()
                // Woken for a step, or ahead of one: look for it for a spin again.
                (spins, spinStart, resting) = (0, DispatchTime.now().uptimeNanoseconds, false)
            }
            if stopping.load(ordering: .acquiring) { break }
            let current = Ticket(bits: ticket.load(ordering: .acquiring))
            seen = current.generation
            resting = current.parts == 0
            claimParts(fromStart: false)
        }
        exited.signal()
    }

    /// Lets the helpers run on every core the caller may use but the one it is on, so
    /// that waking one does not queue it behind the caller (with frames 30 ms apart, in
    /// turns in one process: 3.2-4.3 -> 2.1-3.3 ms per full-range run at two threads, the
    /// helper now doing a third of the work, for 1.16x one thread's CPU per frame instead
    /// of 1.01-1.06x). Only when the caller has moved since the last time; with one core
    /// allowed, nothing changes. A helper records its thread id before it first parks.
    private func keepHelpersOffCallersCore() {
        // A `CoreSet` is on the stack: a run allocates nothing, even when the caller has moved.
        guard let core = CoreSet.current, core != avoidedCore, var cores = CoreSet.allowed() else { return }
        cores.remove(core)
        guard !cores.isEmpty else { return }
        avoidedCore = core
        helperThreads.withLock { threads in
            for thread in threads { cores.allow(thread: thread) }
        }
    }

    /// Stops and waits for every helper; call before the memory the work touches goes away.
    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        wakeAll()
        for _ in 0..<helpers { exited.wait() }
    }

    private func wakeAll() {
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }
}

/// The step on offer as one word, so that one compare-and-swap both reads it and
/// claims parts: generation (bits 40...), step (24...39), part count (16...23),
/// parts claimed from the end (8...15), parts claimed from the start (0...7).
private struct Ticket {
    var bits: Int

    init(bits: Int) { self.bits = bits }

    init(generation: Int, step: Int, parts: Int) { bits = generation << 40 | step << 24 | parts << 16 }

    var generation: Int { bits >> 40 }
    var step: Int { bits >> 24 & 0xFFFF }
    var parts: Int { bits >> 16 & 0xFF }
    var claimedFromEnd: Int { bits >> 8 & 0xFF }
    var claimedFromStart: Int { bits & 0xFF }

    /// This ticket with `size` more parts claimed, from the start or from the end.
    func claiming(_ size: Int, fromStart: Bool) -> Ticket { Ticket(bits: bits + (fromStart ? size : size << 8)) }
}
