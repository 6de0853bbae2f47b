import MonotonicTime

#if canImport(Glibc)
    import Glibc
#endif

/// Waits up to `seconds` for `condition`, looking every 10 ms: for what
/// another thread or process does, with a generous bound that is no claim
/// about speed. Whether it came.
public func eventually(within seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + seconds
    while monotonicSeconds() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
