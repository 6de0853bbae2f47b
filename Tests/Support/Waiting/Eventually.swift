import MonotonicTime

#if canImport(Glibc)
    import Glibc
#endif

/// Waits up to `seconds` for `condition`, looking every `interval` seconds
/// (10 ms unless the condition comes far sooner): for what another thread
/// or process does, with a generous bound that is no claim about speed.
/// Whether it came.
public func eventually(within seconds: Double = 10, lookingEvery interval: Double = 0.01, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + seconds
    while monotonicSeconds() < deadline {
        if condition() { return true }
        usleep(UInt32(interval * 1e6))
    }
    return condition()
}

/// Keeps the calling thread on its core for `seconds`, as a step's real work
/// does: a test's stand-in for work that takes time. Sleeping instead would
/// give the core to another thread, a schedule the code never meets.
public func busy(for seconds: Double) {
    let end = monotonicSeconds() + seconds
    while monotonicSeconds() < end {}
}
