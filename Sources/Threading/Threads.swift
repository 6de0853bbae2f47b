#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import MonotonicTime

/// Starts `body` on a new thread of its own, named `name` for `top` and
/// `/proc` (the kernel keeps 15 bytes). sentry's threads (the encoder, the
/// detector's helpers, the servers' connections) run for long and block in
/// system calls, which Swift's task pool must never do; Foundation's `Thread`
/// would do the same at the price of linking all of Foundation.
public func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(
        &thread, nil,
        { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            nameCurrentThread(start.name)
            start.body()
            return nil
        }, start)
    // Without a thread the process cannot do its work at all (out of memory or of the
    // process's thread limit): stop with the reason rather than run without it.
    precondition(created == 0, "cannot start the thread \(name): error \(created)")
    pthread_detach(thread)
}

/// Gives the calling thread `name` in the kernel (its first 15 bytes).
/// (Glibc's module leaves out `pthread_setname_np`; this is what it does.)
public func nameCurrentThread(_ name: String) {
    let file = open("/proc/thread-self/comm", O_WRONLY)
    guard file >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
    close(file)
}

/// A mutex with its condition variable: a thread waits, with or without a
/// deadline, until another changes what the mutex guards and signals.
public final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        // Deadlines on the monotonic clock: a change of the wall clock moves none of them.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the mutex.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits (the mutex held) until signalled; may wake spuriously, so callers check their condition in a loop.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits (the mutex held) at most `seconds`; false when the time ran out.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let whole = seconds.rounded(.down)
        var nanoseconds = Int(deadline.tv_nsec) + Int((seconds - whole) * 1e9)
        deadline.tv_sec += Int(whole) + nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        deadline.tv_nsec = nanoseconds
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }

    /// Waits until `satisfied()` holds (checked under the mutex) or `seconds` pass; whether it holds.
    public func wait(seconds: Double, until satisfied: () -> Bool) -> Bool {
        let deadline = monotonicSeconds() + seconds
        lock()
        defer { unlock() }
        while !satisfied() {
            let left = deadline - monotonicSeconds()
            guard left > 0 else { return false }
            wait(seconds: left)
        }
        return true
    }

    /// Wakes one waiting thread.
    public func signal() { pthread_cond_signal(condition) }
    /// Wakes every waiting thread.
    public func broadcast() { pthread_cond_broadcast(condition) }
}
