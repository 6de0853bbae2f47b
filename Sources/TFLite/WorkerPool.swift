import Foundation
import Synchronization

/// Helper threads for `Interpreter.invoke()`. Waking a thread per operator
/// costs more than a small convolution takes, so the helpers are woken once
/// per invoke and then spin, taking part `1...helpers` of each split step,
/// until the invoke ends; between frames they sleep. Nothing is allocated
/// per frame.
final class WorkerPool: @unchecked Sendable {
    /// Part `part` of step `step`; called concurrently for different parts.
    typealias Work = @Sendable (_ step: Int, _ part: Int) -> Void

    let helpers: Int
    private let work: Work
    /// Bumped for each step handed out; helpers run `step` when it changes.
    private let generation = Atomic<Int>(0)
    private let step = Atomic<Int>(0)
    private let finished = Atomic<Int>(0)
    private let awake = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    init(helpers: Int, work: @escaping Work) {
        self.helpers = helpers
        self.work = work
        for part in 1...max(helpers, 1) where helpers > 0 {
            let thread = Thread { [unowned self] in self.loop(part: part) }
            thread.name = "sentry-tflite-\(part)"
            thread.start()
        }
    }

    /// Wakes the helpers for one invoke; `body` then hands out steps with `run(step:)`.
    func session(_ body: () -> Void) {
        awake.store(true, ordering: .releasing)
        for _ in 0..<helpers { wake.signal() }
        body()
        awake.store(false, ordering: .releasing)
    }

    /// Runs part 0 of `index` here and the other parts on the helpers; returns when all are done.
    func run(step index: Int) {
        finished.store(0, ordering: .relaxed)
        step.store(index, ordering: .relaxed)
        generation.add(1, ordering: .releasing)
        work(index, 0)
        while finished.load(ordering: .acquiring) < helpers { spinPause() }
    }

    private func loop(part: Int) {
        var seen = generation.load(ordering: .acquiring)
        while true {
            wake.wait()
            if stopping.load(ordering: .acquiring) { break }
            while awake.load(ordering: .acquiring) || generation.load(ordering: .acquiring) != seen {
                let current = generation.load(ordering: .acquiring)
                if current != seen {
                    seen = current
                    work(step.load(ordering: .relaxed), part)
                    finished.add(1, ordering: .releasing)
                } else {
                    spinPause()
                }
            }
        }
        exited.signal()
    }

    /// Stops and waits for every helper; call before the memory the work touches goes away.
    func stop() {
        stopping.store(true, ordering: .releasing)
        for _ in 0..<helpers { wake.signal() }
        for _ in 0..<helpers { exited.wait() }
    }

    @inline(__always) private func spinPause() {
        #if arch(x86_64)
        _ = 0 // a tight loop; the atomic loads keep it from being optimised away
        #endif
    }
}
