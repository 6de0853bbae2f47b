#if canImport(Glibc)
    import Glibc
#endif
import Dispatch
import Foundation
import Logging
import MonotonicTime
import Synchronization

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
        /// The running job's process group.
        var group: pid_t?
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
        let thread = Thread { [self] in
            work(first: job)
            working.leave()
        }
        thread.name = "hooks"
        thread.start()
    }

    /// Drops what waits and gives the running hook `grace` seconds before
    /// killing it: for sentry's exit.
    public func finish(grace: Double = 1) {
        state.withLock {
            $0.stopping = true; $0.waiting = nil
        }
        if working.wait(timeout: .now() + grace) == .timedOut, let group = state.withLock({ $0.group }) {
            logger.warning("hook still running at exit: stopped")
            kill(-group, SIGKILL)
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

    private func run(_ job: Job) {
        guard let pid = spawn(job) else {
            state.withLock { $0.counts.failed += 1 }
            return
        }
        state.withLock {
            $0.counts.started += 1; $0.group = pid
        }
        defer { state.withLock { $0.group = nil } }
        let deadline = monotonicSeconds() + timeout
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if monotonicSeconds() >= deadline {
                kill(-pid, SIGKILL)
                waitpid(pid, &status, 0)
                state.withLock { $0.counts.timedOut += 1 }
                logger.warning("hook \(job.name) took longer than \(timeout) s: killed (--hook-timeout)")
                return
            }
            usleep(10_000)
        }
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        if exited && code == 0 {
            state.withLock { $0.counts.succeeded += 1 }
        } else {
            state.withLock { $0.counts.failed += 1 }
            let how = exited ? "exited with status \(code)" : "was killed by signal \(status & 0x7f)"
            logger.warning("hook \(job.name) \(how): \(job.command)")
        }
    }

    /// `/bin/sh -c COMMAND` in a process group of its own, stdin from
    /// /dev/null, stdout to our stderr (stdout carries `--track`), signals
    /// as a fresh process has them.
    private func spawn(_ job: Job) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, 2, 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var environment = ProcessInfo.processInfo.environment
        environment.merge(job.environment) { $1 }
        let arguments = ["/bin/sh", "-c", job.command]
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
        guard result == 0 else {
            logger.error("hook \(job.name) could not start: \(String(cString: strerror(result)))")
            return nil
        }
        return pid
    }
}
