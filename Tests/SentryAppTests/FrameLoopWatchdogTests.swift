import CoreAffinity
import Foundation
import LogRecording
import MonotonicTime
import Synchronization
import Testing
import Waiting

@testable import SentryApp

@Suite("The frame loop's watchdog")
struct FrameLoopWatchdogTests {
    @Test("a step over the stall time (a second; here 0.2 s) is logged while it lasts, named, with what the kernel says the thread does")
    func stallIsLogged() throws {
        let recorder = LogRecorder()
        let watchdog = FrameLoopWatchdog(observerNames: ["WebConsole", "SlowObserver"], stallSeconds: 0.2, logger: recorder.logger)
        let firstFrameDone = monotonicSeconds()
        watchdog.frameDone()
        watchdog.enter(.observer(1))
        // The stall under test: the loop's thread blocked in a read, as in a blocking call on a
        // port, until the stall has been logged (or 10 s have passed: then the test fails).
        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        defer { for end in pipeEnds { close(end) } }
        let writeEnd = pipeEnds[1]
        let unblocker = Thread {
            _ = eventually { recorder.messages.withLock { $0 }.contains { $0.hasPrefix("warning: frame loop stalled") } }
            _ = write(writeEnd, "x", 1)
        }
        unblocker.start()
        var byte: UInt8 = 0
        _ = read(pipeEnds[0], &byte, 1)
        let loggedDuringStall = recorder.messages.withLock { $0 }
        watchdog.frameDone()
        let gapUpperBound = monotonicSeconds() - firstFrameDone
        watchdog.stop()
        let stall = loggedDuringStall.first { $0.hasPrefix("warning: frame loop stalled: over 0.") }
        #expect(stall != nil, "\(loggedDuringStall)")
        #expect(stall?.contains("s in the observer SlowObserver; the thread is blocked in system call") == true, "\(stall ?? "")")
        #expect(stall?.hasSuffix(" s of it waiting for a CPU)") == true, "\(stall ?? "")")
        let summary = recorder.messages.withLock { $0 }.last ?? ""
        #expect(summary.hasPrefix("notice: frame loop: 2 frames, work per frame "), "\(summary)")
        // The gap is the stall: the stall time at least, and no longer than the test blocked (printed to 0.01 s).
        let gap = summary.components(separatedBy: ", longest gap ").dropFirst().first.flatMap { Double($0.prefix { $0 != " " }) }
        #expect(gap.map { $0 >= 0.2 && $0 <= gapUpperBound + 0.005 } == true, "\(summary): blocked \(gapUpperBound) s")
        #expect(summary.contains(" s of it in the observer SlowObserver)"), "\(summary)")
    }

    @Test("a frame's work is timed from the pipeline to the last observer; the run's median and p99 within 2 %")
    func workPercentiles() {
        var histogram = DurationHistogram()
        #expect(histogram.percentile(0.99) == 0)
        for millisecond in 1...1000 { histogram.add(Double(millisecond) / 1000) }
        let (median, p99) = (histogram.percentile(0.5), histogram.percentile(0.99))
        #expect(median >= 0.5 && median <= 0.5 * 1.02, "\(median)")
        #expect(p99 >= 0.99 && p99 <= 0.99 * 1.02, "\(p99)")
        histogram.add(1e-9)
        histogram.add(1e9)
        #expect(histogram.total == 1002 && histogram.percentile(1) > 60)
    }

    @Test("a step slow only because its thread waited for a CPU behind other work is logged as a busy machine, not as a stall")
    func busyMachine() throws {
        let recorder = LogRecorder()
        let busyLogged: @Sendable () -> Bool = { recorder.messages.withLock { $0 }.contains { $0.hasPrefix("warning: frame loop slowed by a busy machine") } }
        let done = Atomic(false)
        // The loop and seven spinners on one core: the loop gets an eighth of it, so its step
        // passes the stall time (0.2 s) long before its own time (computing, not queued) does.
        let core = try #require(CoreSet.current)
        @Sendable func pin() {
            var one = CoreSet()
            one.insert(core)
            one.allow()
        }
        let spinners = (0..<7).map { _ in
            Thread {
                pin()
                while !done.load(ordering: .relaxed) {}
            }
        }
        for spinner in spinners { spinner.start() }
        defer { done.store(true, ordering: .relaxed) }
        let loopEnded = DispatchSemaphore(value: 0)
        let loop = Thread {
            defer { loopEnded.signal() }
            pin()
            let watchdog = FrameLoopWatchdog(observerNames: [], stallSeconds: 0.2, logger: recorder.logger)
            watchdog.enter(.pipeline)
            // Computing until the watchdog has told (or 10 s have passed: then the test fails).
            let deadline = monotonicSeconds() + 10
            while !busyLogged(), monotonicSeconds() < deadline {}
            watchdog.frameDone()
            watchdog.stop()
        }
        loop.start()
        loopEnded.wait()
        let warnings = recorder.messages.withLock { $0 }.filter { $0.hasPrefix("warning") }
        print("on one core with seven spinners: \(warnings)")
        let busy = warnings.first { $0.hasPrefix("warning: frame loop slowed by a busy machine: over 0.") }
        #expect(busy?.contains(" s in the pipeline (") == true && busy?.hasSuffix(" s of it waiting for a CPU behind other work") == true, "\(warnings)")
        #expect(!warnings.contains { $0.contains("stalled") }, "\(warnings)")
    }

    @Test("steps under the stall time and the wait for a lost camera are not stalls")
    func noFalseStalls() {
        let recorder = LogRecorder()
        let watchdog = FrameLoopWatchdog(observerNames: [], stallSeconds: 0.2, logger: recorder.logger)
        for _ in 0..<5 {
            watchdog.enter(.pipeline)
            busy(for: 0.02)
            watchdog.frameDone()
        }
        watchdog.cameraLost()
        // Twice the stall time waiting for a lost camera: a negative check with a stated window.
        usleep(400_000)
        watchdog.enter(.waitingForFrame)
        watchdog.stop()
        let warnings = recorder.messages.withLock { $0 }.filter { $0.hasPrefix("warning") }
        #expect(warnings.isEmpty, "\(warnings)")
    }
}
