import Foundation
import Hooks
import Logging
import LogRecording
import Scratch
import Synchronization
import Testing
import Waiting

func lines(_ url: URL) -> [String] {
    ((try? String(contentsOf: url, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
}

@Suite("Hooks run beside sentry, one at a time, never in its way")
struct HookRunnerTests {
    @Test("a hook runs once through /bin/sh with the job's environment added to sentry's")
    func environment() throws {
        let scratch = try ScratchDirectory("hooks")
        let out = scratch.file("env")
        let runner = HookRunner(timeout: 5, logger: LogRecorder().logger)
        runner.submit(
            .init(
                name: "on-lock", command: "echo \"$SENTRY_PAN $SENTRY_BOX\" > '\(out.path)'; [ -n \"$PATH\" ] && echo path >> '\(out.path)'",
                environment: ["SENTRY_PAN": "93", "SENTRY_BOX": "1,2,3,4"]))
        #expect(eventually { runner.counts.succeeded == 1 })
        #expect(lines(out) == ["93 1,2,3,4", "path"])
        #expect(runner.counts == .init(started: 1, succeeded: 1))
    }

    @Test("a hook that sleeps 10 s: submitting never waits, one runs, one waits, the rest are dropped and said so; each is killed at the timeout")
    func noPileUp() throws {
        let scratch = try ScratchDirectory("hooks")
        let started = scratch.file("started")
        let log = LogRecorder()
        let runner = HookRunner(timeout: 0.5, logger: log.logger)
        for n in 0..<20 {
            runner.submit(.init(name: "hook \(n)", command: "echo $$ >> '\(started.path)'; sleep 10; echo done >> '\(started.path)'", environment: [:]))
        }
        // Every submit came back while the first hook was still sleeping.
        #expect(lines(started).count <= 1)
        #expect(eventually { runner.counts.timedOut == 2 })
        #expect(lines(started).count == 2, "one ran, then the newest that waited")
        #expect(!lines(started).contains("done"))
        #expect(runner.counts == .init(started: 2, timedOut: 2, dropped: 18))
        let messages = log.messages.withLock { $0 }
        #expect(messages.contains { $0.contains("hook 0 took longer than 0.5 s: killed") })
        #expect(messages.contains { $0.contains("hook 18 skipped") })
    }

    @Test("the timeout kills what the hook started, too")
    func killsTheGroup() throws {
        let scratch = try ScratchDirectory("hooks")
        let child = scratch.file("child")
        let runner = HookRunner(timeout: 0.3, logger: LogRecorder().logger)
        runner.submit(.init(name: "on-lock", command: "sleep 30 & echo $! > '\(child.path)'; wait", environment: [:]))
        #expect(eventually { runner.counts.timedOut == 1 })
        let pid = try #require(lines(child).first.flatMap { Int32($0) })
        #expect(eventually(within: 2) { kill(pid, 0) != 0 }, "sleep 30 outlived its hook")
    }

    @Test("a failing hook is logged with its status and the next one still runs")
    func failureLogged() throws {
        let log = LogRecorder()
        let runner = HookRunner(timeout: 5, logger: log.logger)
        runner.submit(.init(name: "on-lock", command: "exit 3", environment: [:]))
        #expect(eventually { runner.counts.failed == 1 })
        runner.submit(.init(name: "on-lost", command: "true", environment: [:]))
        #expect(eventually { runner.counts.succeeded == 1 })
        #expect(log.messages.withLock { $0 }.contains { $0.contains("hook on-lock exited with status 3: exit 3") })
    }

    @Test("at exit, what waits is dropped and what runs is stopped after the grace time")
    func finish() throws {
        let runner = HookRunner(timeout: 30, logger: LogRecorder().logger)
        runner.submit(.init(name: "a", command: "sleep 30", environment: [:]))
        runner.submit(.init(name: "b", command: "sleep 30", environment: [:]))
        #expect(eventually { runner.counts.started == 1 })
        runner.finish(grace: 0.2)
        #expect(runner.counts.started == 1)
        runner.submit(.init(name: "c", command: "true", environment: [:]))
        // finish waits for every worker: one that submit had started would have run c by then.
        runner.finish(grace: 0.2)
        #expect(runner.counts.started == 1, "nothing starts after finish")
    }
}
