import ChildProcesses
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import Threading

/// Runs user commands (`--on-lock`, `--on-lost`) through `/bin/sh -c`
/// without ever making the caller wait:
///
/// - at most one runs at a time; one more may wait, and a newer one replaces
///   it (said in the log), so a slow hook never piles up processes;
/// - each runs in a process group of its own and is killed, with everything
///   it started, after `timeout` seconds;
/// - a non-zero exit, a signal or a failure to start is logged, never thrown.
public final class HookRunner: Sendable {
    public struct Job: Sendable {
        /// A short name for the log (`on-lock`).
        public var name: String
        public var command: String
        /// Added to sentry's own environment.
        public var environment: [String: String]
        /// Done on the hook's thread just before it starts (writing its pictures):
        /// more environment, and what to undo once the hook has ended.
        public var prepare: (@Sendable () -> (environment: [String: String], cleanup: @Sendable () -> Void))?

        public init(name: String, command: String, environment: [String: String]) {
            self.name = name
            self.command = command
            self.environment = environment
        }
    }

    /// What became of the jobs so far.
    public struct Counts: Sendable, Equatable {
        public var started = 0
        public var succeeded = 0
        public var failed = 0
        public var timedOut = 0
        /// Replaced while waiting, never run.
        public var dropped = 0

        public init(started: Int = 0, succeeded: Int = 0, failed: Int = 0, timedOut: Int = 0, dropped: Int = 0) {
            (self.started, self.succeeded, self.failed, self.timedOut, self.dropped) = (started, succeeded, failed, timedOut, dropped)
        }
    }

    private struct State {
        var running = false
        var waiting: Job?
        var counts = Counts()
        var stopping = false
        /// The running job's shell, leading a process group of its own.
        var child: ChildProcess?
    }

    public let timeout: Double
    private let logger: Logger
    private let state = Mutex(State())
    /// Entered while a worker thread runs jobs, so `finish` can wait for it.
    private let working = DispatchGroup()

    public init(timeout: Double, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    public var counts: Counts { state.withLock { $0.counts } }

    /// Starts `job` now, or after the one running; never blocks.
    public func submit(_ job: Job) {
        let startWorker: Bool = state.withLock { state in
            guard !state.stopping else { return false }
            if state.running {
                if let replaced = state.waiting {
                    state.counts.dropped += 1
                    logger.warning("hook \(replaced.name) skipped: \(job.name) came before the one still running finished")
                }
                state.waiting = job
                return false
            }
            state.running = true
            return true
        }
        guard startWorker else { return }
        working.enter()
        startThread(named: "hooks") { [self] in
            work(first: job)
            working.leave()
        }
    }

    /// Drops what waits and gives the running hook `grace` seconds before
    /// killing it: for sentry's exit.
    public func finish(grace: Double = 1) {
        state.withLock {
            $0.stopping = true; $0.waiting = nil
        }
        if working.wait(timeout: .now() + grace) == .timedOut, let child = state.withLock({ $0.child }) {
            logger.warning("hook still running at exit: stopped")
            child.stop()
        }
        working.wait()
    }

    /// Runs `first`, then whatever waits, until nothing does.
    private func work(first: Job) {
        var next: Job? = first
        while let job = next {
            run(job)
            next = state.withLock { state in
                defer { state.waiting = nil }
                if state.waiting == nil { state.running = false }
                return state.waiting
            }
        }
    }

    /// `/bin/sh -c COMMAND` with stdin from /dev/null and stdout to our stderr (stdout
    /// carries `--track`), in a process group of its own that the timeout and sentry's
    /// end kill whole; the shell is killed too should sentry be killed (SIGKILL).
    private func run(_ job: Job) {
        let prepared = job.prepare?()
        defer { prepared?.cleanup() }
        let environment = job.environment.merging(prepared?.environment ?? [:]) { $1 }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                "/bin/sh", arguments: ["-c", job.command], environment: environment, output: .standardError, error: .standardError,
                ownProcessGroup: true, stopping: [(SIGKILL, .milliseconds(100))], diesWithParent: true)
        } catch {
            state.withLock { $0.counts.failed += 1 }
            logger.error("hook \(job.name) could not start: \(error)")
            return
        }
        state.withLock {
            $0.counts.started += 1; $0.child = child
        }
        defer { state.withLock { $0.child = nil } }
        guard let ending = child.wait(timeout: .seconds(timeout)) else {
            child.stop()
            state.withLock { $0.counts.timedOut += 1 }
            logger.warning("hook \(job.name) took longer than \(timeout) s: killed (--hook-timeout)")
            return
        }
        switch ending {
        case .exited(0):
            state.withLock { $0.counts.succeeded += 1 }
        case .exited(let code):
            state.withLock { $0.counts.failed += 1 }
            logger.warning("hook \(job.name) exited with status \(code): \(job.command)")
        case .killed(let signal):
            state.withLock { $0.counts.failed += 1 }
            logger.warning("hook \(job.name) was killed by signal \(signal): \(job.command)")
        }
    }
}
