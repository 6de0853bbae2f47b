import MonotonicTime

/// Frames a second, as the frames pass: how many came in the last second.
/// The status line and the web console both show it.
struct FrameRateMeter {
    private var times: [Double] = []

    /// Counts a frame at `now`; returns the frames of the last second.
    mutating func tick(at now: Double = monotonicSeconds()) -> Double {
        times.append(now)
        times.removeAll { now - $0 > 1 }
        return Double(times.count)
    }
}
