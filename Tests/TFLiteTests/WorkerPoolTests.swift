import Foundation
import Synchronization
@testable import TFLite
import Testing
import Waiting

@Suite("The worker pool: every part of every unit exactly once, helpers parked between chains")
struct WorkerPoolTests {
    final class Tally: Sendable {
        static let parts = 29
        let counts = Mutex([Int](repeating: 0, count: parts * 5000))
    }

    /// `count` units of `parts` parts each.
    static func units(_ count: Int, parts: Int = Tally.parts) -> [WorkerPool.SharedUnit] {
        [WorkerPool.SharedUnit](repeating: .init(parts: parts), count: count)
    }

    @Test("5,000 units with pauses longer than the spin between them: each part runs once, in its unit")
    func everyPartOnce() {
        let tally = Tally()
        let pool = WorkerPool(helpers: 2, units: Self.units(5000)) { step, parts, count in
            #expect(count == Tally.parts && !parts.isEmpty)
            tally.counts.withLock { for part in parts { $0[step * Tally.parts + part] += 1 } }
        }
        for step in 0..<5000 {
            pool.run(units: step..<step + 1)
            // Now and then a gap until both helpers have spun out and parked: the next run wakes them.
            if step % 500 == 0 { #expect(eventually { pool.parkedHelpers == 2 }) }
        }
        pool.stop()
        #expect(tally.counts.withLock { $0 }.allSatisfy { $0 == 1 })
    }

    @Test("after a run the helpers park at once: with a spin of ten seconds, still spinning without the rest, parked with it")
    func restedHelpersPark() {
        let pool = WorkerPool(helpers: 1, units: Self.units(1, parts: 4), spinNanoseconds: 10_000_000_000) { _, _, _ in }
        defer { pool.stop() }
        pool.run(units: 0..<1)
        usleep(50_000)
        #expect(pool.parkedHelpers == 0)
        pool.rest()
        #expect(eventually { pool.parkedHelpers == 1 })
    }

    @Test("woken ahead of a step, a parked helper looks for it for its spin, then parks again; a step offered while it looks runs whole")
    func wokenAhead() {
        let tally = Tally()
        let pool = WorkerPool(helpers: 1, units: Self.units(2), spinNanoseconds: 300_000_000) { step, parts, _ in
            tally.counts.withLock { for part in parts { $0[step * Tally.parts + part] += 1 } }
        }
        defer { pool.stop() }
        pool.run(units: 0..<1)
        pool.rest()
        #expect(eventually { pool.parkedHelpers == 1 })
        pool.wakeAhead()
        #expect(eventually { pool.parkedHelpers == 0 })
        // No step comes: it parks again once its 0.3 s spin is over.
        #expect(eventually { pool.parkedHelpers == 1 })
        pool.wakeAhead()
        #expect(eventually { pool.parkedHelpers == 0 })
        pool.run(units: 1..<2)
        #expect(tally.counts.withLock { Array($0[0..<2 * Tally.parts]) }.allSatisfy { $0 == 1 })
    }

    @Test("a helper stuck in its claim delays the step by that claim only: the caller runs the rest, one part at a time at the end")
    func callerTakesOverFromASlowHelper() {
        let ranBy = Mutex([Int: Int]())  // part -> 0 caller, 1 helper
        let claims = Mutex([(parts: Range<Int>, onCaller: Bool)]())
        let callerThread = Mutex<Thread?>(nil)
        let pool = WorkerPool(helpers: 1, units: Self.units(1, parts: 20)) { _, parts, _ in
            let onCaller = callerThread.withLock { $0 } == Thread.current
            ranBy.withLock { for part in parts { $0[part] = onCaller ? 0 : 1 } }
            claims.withLock { $0.append((parts, onCaller)) }
            if onCaller {
                // The caller's first claim waits until the helper has one too (a second at most).
                _ = eventually(within: 1, lookingEvery: 0.0001) { claims.withLock { $0.contains { !$0.onCaller } } }
            } else {
                // The helper's claim lasts, as if it had lost its core, until the caller has run every other part.
                #expect(eventually(lookingEvery: 0.0001) { ranBy.withLock(\.count) == 20 })
            }
        }
        callerThread.withLock { $0 = Thread.current }
        pool.run(units: 0..<1)
        pool.stop()
        #expect(ranBy.withLock { $0 }.count == 20)
        let made = claims.withLock { $0 }
        #expect(made.filter { !$0.onCaller }.count == 1, "\(made)")
        // Each claim a third of what was left: the first ones large, the last ones single parts.
        #expect((made.first(where: \.onCaller)?.parts.count ?? 0) >= 4)
        #expect(made.last?.parts.count == 1)
    }

    @Test("the caller runs parts from the start and the helper from the end: each keeps to its part of the image")
    func callerFromTheStartHelperFromTheEnd() {
        let ranBy = Mutex([Int: Bool]())  // part -> run on the caller
        let callerThread = Mutex<Thread?>(nil)
        let pool = WorkerPool(helpers: 1, units: Self.units(20, parts: 16)) { _, parts, _ in
            let onCaller = callerThread.withLock { $0 } == Thread.current
            ranBy.withLock { for part in parts { $0[part] = onCaller } }
            busy(for: 0.001)
        }
        callerThread.withLock { $0 = Thread.current }
        for step in 0..<20 {
            ranBy.withLock { $0 = [:] }
            pool.run(units: step..<step + 1)
            let parts = ranBy.withLock { $0 }
            #expect(parts.count == 16)
            let callers = parts.filter(\.value).keys, helpers = parts.filter { !$0.value }.keys
            #expect(callers.contains(0))
            #expect((callers.max() ?? -1) < (helpers.min() ?? 16), "step \(step): caller \(callers.sorted()), helper \(helpers.sorted())")
        }
        pool.stop()
    }

    @Test(
        "in a chain a part runs only after the parts of the unit before that it reads, and after every unit before that; the threads go on without a wait at each unit's end"
    )
    func chainKeepsItsOrder() {
        // Twelve units of 16 parts; part p reads parts p-1...p+1 of the unit before (a 3x3 window's rows).
        let needs = (0..<16).map { part in UInt64(parts: max(part - 1, 0)..<min(part + 2, 16)) }
        let units = [WorkerPool.SharedUnit](repeating: .init(parts: 16, needs: needs), count: 12)
        let done = Mutex([Set<Int>](repeating: [], count: 12))
        let broken = Mutex([String]())
        let overlapped = Mutex(0)  // parts that ran while the unit before was unfinished
        let pool = WorkerPool(helpers: 2, units: units) { unit, parts, _ in
            done.withLock { done in
                for part in parts where unit > 0 {
                    if !needs[part].partsSet.isSubset(of: done[unit - 1]) { broken.withLock { $0.append("unit \(unit) part \(part): read unfinished rows") } }
                    if unit > 1, done[unit - 2].count < 16 { broken.withLock { $0.append("unit \(unit) part \(part): two units ahead") } }
                    if done[unit - 1].count < 16 { overlapped.withLock { $0 += 1 } }
                }
            }
            busy(for: Double.random(in: 20e-6...300e-6))
            done.withLock { for part in parts { $0[unit].insert(part) } }
        }
        for _ in 0..<20 {
            done.withLock { $0 = [Set<Int>](repeating: [], count: 12) }
            pool.run(units: 0..<12)
            #expect(done.withLock { $0 }.allSatisfy { $0.count == 16 })
        }
        pool.stop()
        #expect(broken.withLock { $0 }.isEmpty, "\(broken.withLock { $0.prefix(5) })")
        // Without the wait at each unit's end, threads start the next unit while another finishes this one.
        #expect(overlapped.withLock { $0 } > 0)
    }

    @Test("a chain's unit without what it reads named waits for all of the unit before")
    func unnamedNeedsWaitForAll() {
        let done = Mutex([Set<Int>](repeating: [], count: 2))
        let early = Mutex(0)
        let pool = WorkerPool(helpers: 1, units: Self.units(2, parts: 8)) { unit, parts, _ in
            if unit == 1, done.withLock({ $0[0].count }) < 8 { early.withLock { $0 += 1 } }
            busy(for: Double.random(in: 20e-6...200e-6))
            done.withLock { for part in parts { $0[unit].insert(part) } }
        }
        for _ in 0..<50 {
            done.withLock { $0 = [[], []] }
            pool.run(units: 0..<2)
        }
        pool.stop()
        #expect(early.withLock { $0 } == 0)
    }

    /// The cores a thread of this process may run on (nil: the calling thread), from /proc ("0-1,3").
    static func allowedCores(thread: pid_t? = nil) throws -> Set<Int> {
        let status = try String(contentsOfFile: thread.map { "/proc/self/task/\($0)/status" } ?? "/proc/thread-self/status", encoding: .utf8)
        let list = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }?.split(separator: "\t").last)
        return Set(
            list.split(separator: ",").flatMap { range -> ClosedRange<Int> in
                let ends = range.split(separator: "-").compactMap { Int($0) }
                return ends[0]...(ends.last ?? ends[0])
            })
    }

    @Test("a parked helper is woken off the caller's core: its allowed cores are all the caller's but the one it runs on")
    func helperKeptOffCallersCore() throws {
        let pool = WorkerPool(helpers: 1, units: Self.units(1, parts: 4)) { _, _, _ in }
        defer { pool.stop() }
        let caller = try Self.allowedCores()
        try #require(caller.count > 1, "needs two cores")
        try #require(eventually { !pool.helperThreads.withLock({ $0.isEmpty }) })
        let helper = pool.helperThreads.withLock { $0[0] }
        #expect(try Self.allowedCores(thread: helper) == caller)
        #expect(eventually { pool.parkedHelpers == 1 })
        pool.run(units: 0..<1)
        #expect(caller.contains(pool.avoidedCore))
        #expect(try Self.allowedCores(thread: helper) == caller.subtracting([pool.avoidedCore]))
    }
}

extension UInt64 {
    /// The parts whose bits are set.
    var partsSet: Set<Int> { Set((0..<64).filter { self >> UInt64($0) & 1 == 1 }) }
}
