import Foundation
import Synchronization
@testable import TFLite
import Testing

@Suite("The worker pool: every chunk of every step exactly once, helpers parked between steps")
struct WorkerPoolTests {
    final class Tally: Sendable {
        static let chunks = 7
        let counts = Mutex([Int](repeating: 0, count: chunks * 5000))
    }

    @Test("5,000 steps with pauses longer than the spin between them: each chunk runs once, in its step")
    func everyChunkOnce() {
        let tally = Tally()
        let pool = WorkerPool(helpers: 2) { step, chunk, chunks in
            #expect(chunks == Tally.chunks)
            tally.counts.withLock { $0[step * Tally.chunks + chunk] += 1 }
        }
        for step in 0..<5000 {
            pool.run(step: step, chunks: Tally.chunks)
            // Now and then a gap long enough for the helpers to park.
            if step % 500 == 0 { usleep(2000) }
        }
        pool.stop()
        #expect(tally.counts.withLock { $0 }.allSatisfy { $0 == 1 })
    }

    @Test("a helper stuck in its chunk delays the step by that chunk only: the caller runs the others")
    func callerTakesOverFromASlowHelper() {
        let ranBy = Mutex([Int: Int]())  // chunk -> 0 caller, 1 helper
        let callerThread = Mutex<Thread?>(nil)
        let pool = WorkerPool(helpers: 1) { _, chunk, _ in
            let onCaller = callerThread.withLock { $0 } == Thread.current
            ranBy.withLock { $0[chunk] = onCaller ? 0 : 1 }
            // The helper's chunk takes long, as if it had lost its core.
            usleep(onCaller ? 2000 : 50_000)
        }
        callerThread.withLock { $0 = Thread.current }
        pool.run(step: 0, chunks: 20)
        pool.stop()
        let chunks = ranBy.withLock { $0 }
        #expect(chunks.count == 20)
        #expect(chunks.values.filter { $0 == 1 }.count <= 1)
    }

    @Test("the caller runs chunks from the start and the helper from the end: each keeps to its part of the image")
    func callerFromTheStartHelperFromTheEnd() {
        let ranBy = Mutex([Int: Bool]())  // chunk -> run on the caller
        let callerThread = Mutex<Thread?>(nil)
        let pool = WorkerPool(helpers: 1) { _, chunk, _ in
            ranBy.withLock { $0[chunk] = callerThread.withLock { $0 } == Thread.current }
            usleep(1000)
        }
        callerThread.withLock { $0 = Thread.current }
        for step in 0..<20 {
            ranBy.withLock { $0 = [:] }
            pool.run(step: step, chunks: 16)
            let chunks = ranBy.withLock { $0 }
            #expect(chunks.count == 16)
            let callers = chunks.filter(\.value).keys, helpers = chunks.filter { !$0.value }.keys
            #expect(callers.contains(0))
            #expect((callers.max() ?? -1) < (helpers.min() ?? 16), "step \(step): caller \(callers.sorted()), helper \(helpers.sorted())")
        }
        pool.stop()
    }
}
