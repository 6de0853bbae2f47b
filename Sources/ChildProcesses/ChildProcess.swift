#if canImport(Glibc)
    import Glibc
#endif
import CProcessHandle
import FoundationEssentials
import Synchronization
import SystemPackage

/// A program sentry starts (ffmpeg, a hook's shell, avrdude, a reference script),
/// for code that lives on threads: the frame loop, the hook worker, a command's
/// `run()`, a test. Started with `posix_spawn` (signals as a fresh process has them),
/// waited for through a pidfd with `poll`, so a wait with a limit sleeps rather than polls.
///
/// Not swift-subprocess: its waits resume on Swift's shared thread pool, and the
/// threads that wait here may be that pool's (a test is); on a two-core machine two
/// tests stopping an ffmpeg each waited for ever for a pool that they held.
public final class ChildProcess: Sendable {
    /// How the child ended, as the kernel reported it.
    public enum Ending: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case killed(signal: Int32)

        public var succeeded: Bool { self == .exited(0) }

        public var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .killed(let signal): "was killed by signal \(signal)"
            }
        }
    }

    /// Why a child could not start: one line for the user.
    public struct StartError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Where the child's standard output or error goes.
    public enum Destination: Sendable {
        /// /dev/null.
        case discarded
        /// sentry's own standard error (hooks: stdout carries `--track`).
        case standardError
        /// A descriptor the caller made, e.g. a pipe's write end; closed in this
        /// process once the child has it, so that the reader sees the end of file.
        case descriptor(FileDescriptor)
    }

    /// The child's process identifier.
    public let processIdentifier: pid_t
    private let ownProcessGroup: Bool
    private let stopping: [(signal: Int32, allowed: Duration)]
    /// Readable once the child has ended; nil on a kernel without pidfds (before 5.3).
    private let handle: FileDescriptor?
    /// How it ended, once reaped: reaping happens once, under this lock, so the pid
    /// is never signalled after it could belong to another process.
    private let ending = Mutex<Ending?>(nil)

    /// Starts `executable` (a path, or a name looked up in `PATH`) and returns once it runs.
    /// - Parameters:
    ///   - environment: added to sentry's own.
    ///   - input: the child's standard input (a pipe's read end, closed here once the child
    ///     has it); /dev/null if nil.
    ///   - ownProcessGroup: the child leads a process group of its own, so that
    ///     `stop` reaches everything it started (a hook's shell and its children).
    ///   - stopping: what `stop` sends before SIGKILL, and how long each may take.
    ///   - diesWithParent: the child is killed should sentry die without stopping it (SIGKILL, a
    ///     crash): the kernel's parent-death signal, set by util-linux's `setpriv` (on every Debian),
    ///     since `posix_spawn` cannot. It reaches the child alone, not what the child started.
    public init(
        _ executable: String, arguments: [String], environment: [String: String] = [:],
        input: FileDescriptor? = nil, output: Destination = .discarded, error: Destination = .discarded,
        ownProcessGroup: Bool = false, stopping: [(signal: Int32, allowed: Duration)] = [(SIGTERM, .seconds(2))],
        diesWithParent: Bool = false
    ) throws(StartError) {
        var (executable, arguments) = (executable, arguments)
        if diesWithParent, access(Self.setpriv, X_OK) == 0 {
            (executable, arguments) = (Self.setpriv, ["--pdeathsig", "KILL", "--", executable] + arguments)
        }
        self.ownProcessGroup = ownProcessGroup
        self.stopping = stopping
        // The descriptors handed over are the caller's to give up, started or not.
        let handedOver = [input] + [output, error].map { if case .descriptor(let descriptor) = $0 { descriptor } else { nil } }
        defer { for descriptor in handedOver { try? descriptor?.close() } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input.rawValue, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        for (destination, target) in [(output, Int32(1)), (error, Int32(2))] {
            switch destination {
            case .discarded: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .standardError: if target != 2 { posix_spawn_file_actions_adddup2(&actions, 2, target) }
            case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor.rawValue, target)
            }
        }
        // Nothing else of sentry's: a connection, the serial port, a pipe that lacked close-on-exec for a moment.
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
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
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if ownProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0)=\($1)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw StartError(description: "cannot start \(executable) (\(Errno(rawValue: result)))") }
        processIdentifier = pid
        let handle = sentry_pidfd_open(pid)
        self.handle = handle >= 0 ? FileDescriptor(rawValue: handle) : nil
    }

    deinit { try? handle?.close() }

    /// util-linux's tool that sets the parent-death signal, then executes the program in the same process.
    static let setpriv = "/usr/bin/setpriv"

    /// How it ended, waiting up to `timeout` (for ever if nil); nil if it still runs.
    @discardableResult
    public func wait(timeout: Duration? = nil) -> Ending? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if let ending = reap() { return ending }
            let left = deadline.map { ContinuousClock.now.duration(to: $0) }
            if let left, left <= .zero { return nil }
            sleepUntilEnded(atMost: left)
        }
    }

    /// Stops it (the `stopping` signals, each given its time, then SIGKILL; to its group
    /// if it leads one) and waits until it has ended.
    @discardableResult
    public func stop() -> Ending? {
        for (signal, allowed) in stopping {
            if let ending = send(signal, waiting: allowed) { return ending }
        }
        _ = send(SIGKILL, waiting: .zero)
        return wait()
    }

    /// Sends `signal` unless it has been reaped, then waits up to `allowed` for it to end.
    private func send(_ signal: Int32, waiting allowed: Duration) -> Ending? {
        let reaped = ending.withLock { ending in
            if ending == nil { _ = kill(ownProcessGroup ? -processIdentifier : processIdentifier, signal) }
            return ending
        }
        return reaped ?? wait(timeout: allowed)
    }

    /// Reaps the child if it has ended (once; later calls give the stored ending).
    private func reap() -> Ending? {
        ending.withLock { ending in
            if ending == nil {
                var status: Int32 = 0
                if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier {
                    ending = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .killed(signal: status & 0x7f)
                }
            }
            return ending
        }
    }

    /// Sleeps until the child ends or `limit` passes (a pidfd's poll; 10 ms naps without one).
    private func sleepUntilEnded(atMost limit: Duration?) {
        let milliseconds = limit.map { Int32(clamping: Int(($0 / .milliseconds(1)).rounded(.up))) } ?? -1
        guard let handle else {
            usleep(UInt32(min(milliseconds < 0 ? 10 : milliseconds, 10)) * 1000)
            return
        }
        var pollfd = Glibc.pollfd(fd: handle.rawValue, events: Int16(POLLIN), revents: 0)
        _ = poll(&pollfd, 1, milliseconds)
    }
}
