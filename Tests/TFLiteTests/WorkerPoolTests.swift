import Synchronization
@testable import TFLite
import Testing

@Suite("The worker pool: every part of every step exactly once, helpers parked between steps")
struct WorkerPoolTests {
    final class Tally: Sendable {
        let counts = Mutex([Int](repeating: 0, count: 3 * 5000))
    }

    @Test("5,000 steps with pauses longer than the spin between them: each part runs once, in its step")
    func everyPartOnce() {
        let tally = Tally()
        let pool = WorkerPool(helpers: 2) { step, part in tally.counts.withLock { $0[step * 3 + part] += 1 } }
        pool.session {
            for step in 0..<5000 {
                pool.run(step: step)
                // Now and then a gap long enough for the helpers to park.
                if step % 500 == 0 { for _ in 0..<200_000 { _ = tally.counts.withLock { $0[0] } } }
            }
        }
        pool.stop()
        #expect(tally.counts.withLock { $0 }.allSatisfy { $0 == 1 })
    }
}
