import Foundation
import Synchronization
@testable import TFLite
import Testing

@Suite("The worker pool: every part of every step exactly once, helpers parked between steps")
struct WorkerPoolTests {
    final class Tally: Sendable {
        static let parts = 29
        let counts = Mutex([Int](repeating: 0, count: parts * 5000))
    }

    @Test("5,000 steps with pauses longer than the spin between them: each part runs once, in its step")
    func everyPartOnce() {
        let tally = Tally()
        let pool = WorkerPool(helpers: 2) { step, parts, count in
            #expect(count == Tally.parts && !parts.isEmpty)
            tally.counts.withLock { for part in parts { $0[step * Tally.parts + part] += 1 } }
        }
        for step in 0..<5000 {
            pool.run(step: step, parts: Tally.parts)
            // Now and then a gap long enough for the helpers to park.
            if step % 500 == 0 { usleep(2000) }
        }
        pool.stop()
        #expect(tally.counts.withLock { $0 }.allSatisfy { $0 == 1 })
    }

    @Test("after a run the helpers park at once: with a spin of ten seconds, still spinning without the rest, parked with it")
    func restedHelpersPark() {
        let pool = WorkerPool(helpers: 1, spinNanoseconds: 10_000_000_000) { _, _, _ in }
        defer { pool.stop() }
        pool.run(step: 0, parts: 4)
        usleep(50_000)
        #expect(pool.parkedHelpers == 0)
        pool.rest()
        for _ in 0..<5000 where pool.parkedHelpers == 0 { usleep(1000) }
        #expect(pool.parkedHelpers == 1)
    }

    @Test("woken ahead of a step, a parked helper looks for it for its spin, then parks again; a step offered while it looks runs whole")
    func wokenAhead() {
        let tally = Tally()
        let pool = WorkerPool(helpers: 1, spinNanoseconds: 300_000_000) { step, parts, _ in
            tally.counts.withLock { for part in parts { $0[step * Tally.parts + part] += 1 } }
        }
        defer { pool.stop() }
        func waitUntil(parked: Int) {
            for _ in 0..<5000 where pool.parkedHelpers != parked { usleep(1000) }
        }
        pool.run(step: 0, parts: Tally.parts)
        pool.rest()
        waitUntil(parked: 1)
        #expect(pool.parkedHelpers == 1)
        pool.wakeAhead()
        waitUntil(parked: 0)
        #expect(pool.parkedHelpers == 0)
        // No step comes: it parks again once its 0.3 s spin is over.
        waitUntil(parked: 1)
        #expect(pool.parkedHelpers == 1)
        pool.wakeAhead()
        waitUntil(parked: 0)
        pool.run(step: 1, parts: Tally.parts)
        #expect(tally.counts.withLock { Array($0[0 ..< 2 * Tally.parts]) }.allSatisfy { $0 == 1 })
    }

    @Test("a helper stuck in its claim delays the step by that claim only: the caller runs the rest, one part at a time at the end")
    func callerTakesOverFromASlowHelper() {
        let ranBy = Mutex([Int: Int]())  // part -> 0 caller, 1 helper
        let claims = Mutex([(parts: Range<Int>, onCaller: Bool)]())
        let callerThread = Mutex<Thread?>(nil)
        let pool = WorkerPool(helpers: 1) { _, parts, _ in
            let onCaller = callerThread.withLock { $0 } == Thread.current
            ranBy.withLock { for part in parts { $0[part] = onCaller ? 0 : 1 } }
            claims.withLock { $0.append((parts, onCaller)) }
            // The helper's claim takes long, as if it had lost its core.
            usleep(onCaller ? 2000 : 50_000)
        }
        callerThread.withLock { $0 = Thread.current }
        pool.run(step: 0, parts: 20)
        pool.stop()
        #expect(ranBy.withLock { $0 }.count == 20)
        let made = claims.withLock { $0 }
        #expect(made.filter { !$0.onCaller }.count <= 1)
        // Each claim a third of what was left: the first ones large, the last ones single parts.
        #expect((made.first(where: \.onCaller)?.parts.count ?? 0) >= 4)
        #expect(made.last?.parts.count == 1)
    }

    @Test("the caller runs parts from the start and the helper from the end: each keeps to its part of the image")
    func callerFromTheStartHelperFromTheEnd() {
        let ranBy = Mutex([Int: Bool]())  // part -> run on the caller
        let callerThread = Mutex<Thread?>(nil)
        let pool = WorkerPool(helpers: 1) { _, parts, _ in
            let onCaller = callerThread.withLock { $0 } == Thread.current
            ranBy.withLock { for part in parts { $0[part] = onCaller } }
            usleep(1000)
        }
        callerThread.withLock { $0 = Thread.current }
        for step in 0..<20 {
            ranBy.withLock { $0 = [:] }
            pool.run(step: step, parts: 16)
            let parts = ranBy.withLock { $0 }
            #expect(parts.count == 16)
            let callers = parts.filter(\.value).keys, helpers = parts.filter { !$0.value }.keys
            #expect(callers.contains(0))
            #expect((callers.max() ?? -1) < (helpers.min() ?? 16), "step \(step): caller \(callers.sorted()), helper \(helpers.sorted())")
        }
        pool.stop()
    }

    /// The cores a thread of this process may run on (nil: the calling thread), from /proc ("0-1,3").
    static func allowedCores(thread: pid_t? = nil) throws -> Set<Int> {
        let status = try String(contentsOfFile: thread.map { "/proc/self/task/\($0)/status" } ?? "/proc/thread-self/status", encoding: .utf8)
        let list = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }?.split(separator: "\t").last)
        return Set(list.split(separator: ",").flatMap { range -> ClosedRange<Int> in
            let ends = range.split(separator: "-").compactMap { Int($0) }
            return ends[0]...(ends.last ?? ends[0])
        })
    }

    @Test("a parked helper is woken off the caller's core: its allowed cores are all the caller's but the one it runs on")
    func helperKeptOffCallersCore() throws {
        let pool = WorkerPool(helpers: 1) { _, _, _ in }
        defer { pool.stop() }
        let caller = try Self.allowedCores()
        try #require(caller.count > 1, "needs two cores")
        while pool.helperThreads.withLock({ $0.isEmpty }) { usleep(1000) }
        let helper = pool.helperThreads.withLock { $0[0] }
        #expect(try Self.allowedCores(thread: helper) == caller)
        usleep(50_000)  // the helper has parked
        pool.run(step: 0, parts: 4)
        #expect(caller.contains(Int(pool.avoidedCore)))
        #expect(try Self.allowedCores(thread: helper) == caller.subtracting([Int(pool.avoidedCore)]))
    }
}
