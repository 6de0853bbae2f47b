import Foundation
import Synchronization

/// Helper threads for `Interpreter.invoke()`. Waking a thread per operator
/// costs more than a small convolution takes, so a helper that has finished
/// its part of a split step spins a few microseconds for the next one
/// (`spinLimit`), then parks on a condition until `run(step:)` wakes it: the
/// gaps between split steps (unsplit small operators) and between frames
/// cost no CPU. Helpers take part `1...helpers` of each split step. Nothing
/// is allocated per frame.
final class WorkerPool: @unchecked Sendable {
    /// Part `part` of step `step`; called concurrently for different parts.
    typealias Work = @Sendable (_ step: Int, _ part: Int) -> Void

    let helpers: Int
    private let work: Work
    /// Bumped for each step handed out; helpers run `step` when it changes.
    private let generation = Atomic<Int>(0)
    private let step = Atomic<Int>(0)
    private let finished = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// Helpers asleep on `wake`, to be woken when the next step comes.
    private let parked = Atomic<Int>(0)
    private let wake = NSCondition()
    private let exited = DispatchSemaphore(value: 0)

    /// Polls of `generation` before a helper parks: a few microseconds.
    static let spinLimit = 2000

    init(helpers: Int, work: @escaping Work) {
        self.helpers = helpers
        self.work = work
        for part in 1...max(helpers, 1) where helpers > 0 {
            let thread = Thread { [unowned self] in self.loop(part: part) }
            thread.name = "sentry-tflite-\(part)"
            thread.start()
        }
    }

    /// Runs `body`, which hands out steps with `run(step:)` (kept for the
    /// interpreter's shape: helpers now wake per step, not per invoke).
    func session(_ body: () -> Void) {
        body()
    }

    /// Runs part 0 of `index` here and the other parts on the helpers; returns when all are done.
    func run(step index: Int) {
        finished.store(0, ordering: .relaxed)
        step.store(index, ordering: .relaxed)
        // Sequentially consistent with the helper's park: either it sees the
        // new generation, or this sees it parked and wakes it.
        generation.add(1, ordering: .sequentiallyConsistent)
        if parked.load(ordering: .sequentiallyConsistent) > 0 { wakeAll() }
        work(index, 0)
        while finished.load(ordering: .acquiring) < helpers {}
    }

    private func loop(part: Int) {
        // The generation when the pool was made: a step handed out before
        // this thread got going is still seen as new.
        var seen = 0
        while !stopping.load(ordering: .acquiring) {
            var spins = 0
            while generation.load(ordering: .acquiring) == seen, !stopping.load(ordering: .acquiring) {
                spins += 1
                guard spins >= Self.spinLimit else { continue }
                // Park: say so first, then look again under the lock, so a
                // step handed out in between is never missed.
                wake.lock()
                parked.add(1, ordering: .sequentiallyConsistent)
                while generation.load(ordering: .sequentiallyConsistent) == seen, !stopping.load(ordering: .acquiring) { wake.wait() }
                parked.subtract(1, ordering: .sequentiallyConsistent)
                wake.unlock()
                spins = 0
            }
            if stopping.load(ordering: .acquiring) { break }
            seen = generation.load(ordering: .acquiring)
            work(step.load(ordering: .relaxed), part)
            finished.add(1, ordering: .releasing)
        }
        exited.signal()
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
