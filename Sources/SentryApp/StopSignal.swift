#if canImport(Glibc)
    import Glibc
#endif
import Synchronization
import SystemPackage

/// SIGINT and SIGTERM ask the run loop to stop, so that the serial port's
/// settings are restored and the parting command is sent. The handler only
/// stores to an atomic flag and writes a byte to a pipe, both async-signal-safe;
/// the pipe lets a thread with nothing else to do sleep in `wait` until then.
public enum StopSignal {
    private static let requested = Atomic<Bool>(false)
    /// The pipe's ends (-1 before `install`); the handler writes, `wait` polls.
    private static let wakeRead = Atomic<Int32>(-1), wakeWrite = Atomic<Int32>(-1)

    /// True once SIGINT or SIGTERM arrived.
    public static var isRequested: Bool { requested.load(ordering: .relaxed) }

    /// Installs the handlers (without `SA_RESTART`, so a blocked read returns).
    public static func install() {
        if wakeRead.load(ordering: .relaxed) < 0, let ends = try? FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking]) {
            wakeWrite.store(ends.writeEnd.rawValue, ordering: .relaxed)
            wakeRead.store(ends.readEnd.rawValue, ordering: .relaxed)
        }
        for signal in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in
                // The interrupted thread may be about to read errno (a failed read, accept, poll): keep it.
                let interrupted = errno
                defer { errno = interrupted }
                StopSignal.requested.store(true, ordering: .relaxed)
                var byte: UInt8 = 1
                _ = write(StopSignal.wakeWrite.load(ordering: .relaxed), &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signal, &action, nil)
        }
        // A parent may have started us with them blocked (threads often do).
        var stops = sigset_t()
        sigemptyset(&stops)
        sigaddset(&stops, SIGINT)
        sigaddset(&stops, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &stops, nil)
    }

    /// Sleeps until a stop is requested or `timeout` seconds pass (for ever if nil);
    /// whether a stop was requested. Needs `install()` first.
    @discardableResult
    public static func wait(timeout: Double? = nil) -> Bool {
        let fd = wakeRead.load(ordering: .relaxed)
        guard !isRequested else { return true }
        guard fd >= 0 else {  // no pipe (install failed to make one): a short nap instead
            usleep(UInt32(min(timeout ?? 0.05, 0.05) * 1_000_000))
            return isRequested
        }
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&pollfd, 1, timeout.map { Int32(($0 * 1000).rounded(.up)) } ?? -1)
        return isRequested
    }
}
