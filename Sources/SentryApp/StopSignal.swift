#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// SIGINT and SIGTERM ask the run loop to stop, so that the serial port's
/// settings are restored and the parting command is sent. The handler only
/// stores to an atomic flag, which is async-signal-safe.
public enum StopSignal {
    private static let requested = Atomic<Bool>(false)

    /// True once SIGINT or SIGTERM arrived.
    public static var isRequested: Bool { requested.load(ordering: .relaxed) }

    /// Installs the handlers (without `SA_RESTART`, so a blocked read returns).
    public static func install() {
        for signal in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in StopSignal.requested.store(true, ordering: .relaxed) }
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
}
