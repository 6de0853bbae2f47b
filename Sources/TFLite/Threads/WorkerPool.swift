import CoreAffinity
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import Threading

/// Helper threads for `Interpreter.invoke()`.
///
/// The pool runs units (a step or a group of steps) cut into parts (a few
/// dozen), and every thread, the caller included, claims a run of unclaimed
/// parts until none is left, each claim a share of what is left: the first
/// claims are large (few hand-overs), the last are single parts, so neither
/// thread waits long for the other at the end of a unit. A helper that is
/// still waking up, or that the scheduler has taken off its core for another
/// thread, delays the unit by at most the claim it holds: the caller does the
/// rest itself instead of spinning until the helper is back.
///
/// `run` takes a chain of consecutive units, and a thread that has nothing
/// left to claim in one goes on to the next without waiting for the others:
/// before it runs a claim it waits only for the parts of the unit before that
/// the claim reads (`SharedUnit.needs`) and for every unit before that one to
/// be finished. The threads are then at most one unit apart, and a chain's
/// units end without a meeting point between them (the interpreter's planner
/// keeps each unit's inputs one unit longer for that, see `Planner.lagging`):
/// a wait at each of a network's forty-odd unit ends would have the caller
/// wait for the helper's last parts and the helper spin for the next unit.
///
/// Between chains a helper spins up to `spinNanoseconds` for the next one
/// (yielding its core at each look after the first microseconds), then parks
/// on a condition until `run` wakes it (or `wakeAhead`, shortly before one):
/// the short gaps inside a network run (a unit too small to share) cost no
/// wake-up, which takes tens of microseconds on a virtual machine. At the end
/// of a run the caller sends the helpers to rest (`rest`): they park at once,
/// so waiting for the next frame costs no CPU at all. Nothing is allocated
/// per frame.
///
/// Parked helpers may not run on the caller's core (`keepHelpersOffCallersCore`):
/// left to itself, a kernel may wake a helper there, behind the busy caller, and
/// it then joins the run when the network is half done.
final class WorkerPool: @unchecked Sendable {
    /// Parts `parts` of the `count` that unit `unit` is cut into; called concurrently for disjoint parts.
    typealias Work = @Sendable (_ unit: Int, _ parts: Range<Int>, _ count: Int) -> Void

    /// How a unit is cut, and what its parts read of the unit before it in a chain.
    struct SharedUnit: Sendable {
        /// Parts, 1 to `maximumParts`.
        var parts: Int
        /// For each part, the parts of the unit before it that it reads (bit q for part q),
        /// finished before it runs; empty: all of them.
        var needs: [UInt64] = []
    }

    let helpers: Int
    private let work: Work
    private let units: [SharedUnit]
    /// The chain on offer, a `ChainTicket`'s bits.
    private let ticket = Atomic<Int>(0)
    /// Each unit's claims, a `Ticket`'s bits.
    private let claims: UnsafeMutablePointer<Atomic<Int>>
    /// Each unit's finished parts, bit q for part q.
    private let finished: UnsafeMutablePointer<Atomic<UInt64>>
    /// The chain's first unfinished unit, tagged with the chain's generation (`Progress`).
    private let progress = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// Helpers asleep on `wake`, to be woken when the next chain comes.
    private let parked = Atomic<Int>(0)
    /// Calls to `wakeAhead`: a parked helper wakes when this changes, as for a new chain.
    private let alerts = Atomic<Int>(0)
    /// How many helpers are asleep now.
    var parkedHelpers: Int { parked.load(ordering: .relaxed) }
    private let wake = Condition()
    private let exited = DispatchSemaphore(value: 0)
    private var generation = 0
    /// The helpers' kernel thread ids, for their allowed cores.
    let helperThreads = Mutex<[pid_t]>([])
    /// The core the helpers were last kept off (-1 before the first wake, or with one core allowed).
    private(set) var avoidedCore = -1

    /// How long a helper looks for the next chain before it parks: long enough
    /// to bridge the gaps inside a network run (a few parkings per run rather
    /// than dozens), short enough that spinning costs no more than the parking
    /// and waking it saves (docs/PERFORMANCE.md).
    static let spinNanoseconds: UInt64 = 20_000
    /// `spinNanoseconds`, or another for tests.
    private let spinLimit: UInt64
    /// Polls (about 2 µs) before a waiting thread yields its core at each look:
    /// the caller, waiting for a helper's last part, and a helper, waiting for
    /// the next chain. When the two share a core (a video decoder in another
    /// process holding the other), spinning would keep the one that has work
    /// off it; and a helper that does not yield, once woken, preempts the
    /// caller on its core.
    static let pollsBeforeYield = 2048
    /// The most parts a unit is cut into (a part is a bit of `finished`).
    static let maximumParts = 64

    /// `units`: how each unit `run` may be given is cut (fewer than 65,536 units: a chain is two 16-bit fields).
    init(helpers: Int, units: [SharedUnit], spinNanoseconds: UInt64 = WorkerPool.spinNanoseconds, work: @escaping Work) {
        precondition(units.count < 65536 && units.allSatisfy { (1...Self.maximumParts).contains($0.parts) })
        self.helpers = helpers
        self.work = work
        self.units = units
        spinLimit = spinNanoseconds
        claims = .allocate(capacity: units.count)
        finished = .allocate(capacity: units.count)
        for unit in units.indices {
            (claims + unit).initialize(to: Atomic(0))
            (finished + unit).initialize(to: Atomic(0))
        }
        // The pool is ready when every helper has started: a helper's start allocates
        // (its name, its entry here), which must not land in a frame run later
        // (a loaded machine can start a thread after the first frames).
        let started = DispatchSemaphore(value: 0)
        for part in 1...max(helpers, 1) where helpers > 0 {
            let name = "sentry-tflite-\(part)"
            startThread(named: name) { [unowned self] in
                self.helperThreads.withLock { $0.append(currentThreadID()) }
                started.signal()
                self.loop()
            }
        }
        for _ in 0..<helpers { started.wait() }
    }

    /// Runs every part of the units `chain`, here and on the helpers; returns when
    /// all are done. Every unit before the chain must be finished.
    func run(units chain: Range<Int>) {
        precondition(!chain.isEmpty && chain.upperBound <= units.count)
        let generation = nextGeneration()
        // Everything a thread reads once it holds a claim of the new generation is in place before the claims.
        for unit in chain { finished[unit].store(0, ordering: .relaxed) }
        progress.store(Progress(generation: generation, unit: chain.lowerBound).bits, ordering: .releasing)
        for unit in chain {
            claims[unit].store(Ticket(generation: generation, parts: units[unit].parts).bits, ordering: .releasing)
        }
        offer(ChainTicket(generation: generation, chain: chain))
        if parked.load(ordering: .sequentiallyConsistent) > 0 {
            keepHelpersOffCallersCore()
            wakeAll()
        }
        work(through: chain, generation: generation, fromStart: true)
        var polls = 0
        while Progress(bits: progress.load(ordering: .acquiring)).unit < chain.upperBound {
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
    /// run is over and the next one is a frame away. A chain without units.
    func rest() { offer(ChainTicket(generation: nextGeneration(), chain: 0..<0)) }

    /// A new generation for the next run or rest, so that helpers see it even for the same chain.
    private func nextGeneration() -> Int {
        generation = (generation + 1) & 0x7F_FFFF  // 23 bits: the tickets stay positive
        return generation
    }

    /// Puts a chain on offer, of a new generation. Sequentially consistent with the
    /// helper's park: either it sees the new ticket, or `run` sees it parked and wakes it.
    private func offer(_ chain: ChainTicket) {
        ticket.store(chain.bits, ordering: .sequentiallyConsistent)
    }

    /// Runs claims in each unit of `chain` in turn until none is left: the caller
    /// from the start of each, the helpers from the end, so that each thread mostly
    /// works on the same part of the image from one unit to the next (in its own
    /// cache) and they meet wherever the work evens out.
    private func work(through chain: Range<Int>, generation: Int, fromStart: Bool) {
        for unit in chain { claimParts(of: unit, in: chain, generation: generation, fromStart: fromStart) }
    }

    /// Claims and runs parts of `unit` until none is left, each claim 1/(threads + 1)
    /// of the parts left, at least one. A thread late from an earlier run of `generation`
    /// claims nothing in the next one: it goes back to the ticket and joins that run afresh.
    private func claimParts(of unit: Int, in chain: Range<Int>, generation: Int, fromStart: Bool) {
        var current = Ticket(bits: claims[unit].load(ordering: .acquiring))
        while current.generation == generation {
            let (parts, started, fromEnd) = (current.parts, current.claimedFromStart, current.claimedFromEnd)
            guard started + fromEnd < parts else { return }
            let size = max(1, (parts - started - fromEnd) / (helpers + 2))
            let claim = current.claiming(size, fromStart: fromStart)
            let (exchanged, original) = claims[unit].compareExchange(
                expected: current.bits, desired: claim.bits,
                ordering: .acquiringAndReleasing)
            guard exchanged else {
                current = Ticket(bits: original)
                continue
            }
            let range = fromStart ? started..<started + size : parts - fromEnd - size..<parts - fromEnd
            if unit > chain.lowerBound { waitUntilReadable(range, of: unit, after: unit - 1) }
            work(unit, range, parts)
            let done = UInt64(parts: range)
            let before = finished[unit].bitwiseOr(done, ordering: .sequentiallyConsistent).oldValue
            if before | done == UInt64(parts: 0..<parts) { advanceProgress(through: chain, generation: generation) }
            current = claim
        }
    }

    /// Waits until the parts of `previous` that parts `range` of `unit` read are
    /// finished, and every unit before `previous`: what those write over was read last there.
    private func waitUntilReadable(_ range: Range<Int>, of unit: Int, after previous: Int) {
        let needs = units[unit].needs
        var needed = needs.isEmpty ? UInt64(parts: 0..<units[previous].parts) : 0
        for part in range where !needs.isEmpty { needed |= needs[part] }
        var polls = 0
        while Progress(bits: progress.load(ordering: .acquiring)).unit < previous
            || finished[previous].load(ordering: .acquiring) & needed != needed
        {
            polls += 1
            if polls > Self.pollsBeforeYield { sched_yield() }
        }
    }

    /// Moves the chain's first unfinished unit past every unit now finished. The
    /// generation keeps a thread late from an earlier run from moving the next run's.
    private func advanceProgress(through chain: Range<Int>, generation: Int) {
        let end = chain.upperBound
        var current = Progress(bits: progress.load(ordering: .sequentiallyConsistent))
        while current.generation == generation, current.unit < end,
            finished[current.unit].load(ordering: .sequentiallyConsistent) == UInt64(parts: 0..<units[current.unit].parts)
        {
            let next = Progress(generation: generation, unit: current.unit + 1)
            let (exchanged, original) = progress.compareExchange(
                expected: current.bits, desired: next.bits,
                ordering: .sequentiallyConsistent)
            current = exchanged ? next : Progress(bits: original)
        }
    }

    private func loop() {
        var seen = 0
        var resting = false
        while !stopping.load(ordering: .acquiring) {
            var spins = 0
            var spinStart = DispatchTime.now().uptimeNanoseconds
            while ChainTicket(bits: ticket.load(ordering: .acquiring)).generation == seen, !stopping.load(ordering: .acquiring) {
                spins += 1
                // The clock (and the yield) every 256 polls (a few hundred nanoseconds).
                guard resting || spins % 256 == 0 else { continue }
                if spins >= Self.pollsBeforeYield { sched_yield() }
                guard resting || DispatchTime.now().uptimeNanoseconds - spinStart >= spinLimit else { continue }
                // Park: say so first, then look again under the lock, so a
                // chain handed out in between is never missed.
                wake.lock()
                parked.add(1, ordering: .sequentiallyConsistent)
                let alerted = alerts.load(ordering: .sequentiallyConsistent)
                while ChainTicket(bits: ticket.load(ordering: .sequentiallyConsistent)).generation == seen,
                    alerts.load(ordering: .sequentiallyConsistent) == alerted, !stopping.load(ordering: .acquiring)
                {
                    wake.wait()
                }
                parked.subtract(1, ordering: .sequentiallyConsistent)
                wake.unlock()
                // Woken for a chain, or ahead of one: look for it for a spin again.
                (spins, spinStart, resting) = (0, DispatchTime.now().uptimeNanoseconds, false)
            }
            if stopping.load(ordering: .acquiring) { break }
            let current = ChainTicket(bits: ticket.load(ordering: .acquiring))
            seen = current.generation
            resting = current.chain.isEmpty
            work(through: current.chain, generation: seen, fromStart: false)
        }
        exited.signal()
    }

    /// Lets the helpers run on every core the caller may use but the one it is on, so
    /// that waking one does not queue it behind the caller. Only when the caller has
    /// moved since the last time; with one core allowed, nothing changes. A helper records its thread id before it first parks.
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

    deinit {
        claims.deinitialize(count: units.count)
        claims.deallocate()
        finished.deinitialize(count: units.count)
        finished.deallocate()
    }

    private func wakeAll() {
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }
}

/// The chain on offer as one word: generation (bits 32...), first unit (16...31),
/// end (0...15); a chain without units sends the helpers to rest.
private struct ChainTicket {
    var bits: Int

    init(bits: Int) { self.bits = bits }

    init(generation: Int, chain: Range<Int>) { bits = generation << 32 | chain.lowerBound << 16 | chain.upperBound }

    var generation: Int { bits >> 32 }
    var chain: Range<Int> { min(bits >> 16 & 0xFFFF, bits & 0xFFFF)..<(bits & 0xFFFF) }
}

/// A unit's claims as one word, so that one compare-and-swap both reads them and
/// claims parts: generation (bits 40...), part count (16...23), parts claimed from
/// the end (8...15), parts claimed from the start (0...7).
private struct Ticket {
    var bits: Int

    init(bits: Int) { self.bits = bits }

    init(generation: Int, parts: Int) { bits = generation << 40 | parts << 16 }

    var generation: Int { bits >> 40 }
    var parts: Int { bits >> 16 & 0xFF }
    var claimedFromEnd: Int { bits >> 8 & 0xFF }
    var claimedFromStart: Int { bits & 0xFF }

    /// This ticket with `size` more parts claimed, from the start or from the end.
    func claiming(_ size: Int, fromStart: Bool) -> Ticket { Ticket(bits: bits + (fromStart ? size : size << 8)) }
}

/// The first unfinished unit of the chain on offer, with the chain's generation (bits 32...).
private struct Progress {
    var bits: Int

    init(bits: Int) { self.bits = bits }

    init(generation: Int, unit: Int) { bits = generation << 32 | unit }

    var generation: Int { bits >> 32 }
    var unit: Int { bits & 0xFFFF_FFFF }
}

extension UInt64 {
    /// Bits `parts` (within 0..<64) set: the parts of a unit, as `WorkerPool.SharedUnit.needs` names them.
    init(parts: Range<Int>) {
        let count = UInt64(parts.count)
        self = count == 64 ? .max : ((1 << count) - 1) << UInt64(parts.lowerBound)
    }
}
