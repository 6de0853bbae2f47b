#if canImport(Glibc)
    import Glibc
#endif

/// Seconds on the monotonic clock (for intervals; not the time of day).
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
