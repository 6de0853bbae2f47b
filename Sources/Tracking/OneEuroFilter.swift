import FoundationEssentials

/// The One Euro filter (Casiez, Roussel, Vogel, CHI 2012): a low-pass filter
/// whose cutoff rises with speed, so a still face stops jittering while a
/// moving one is followed with little lag.
///
/// `minCutoff` (Hz) sets how still a still face is (lower: steadier, more
/// lag at low speed); `beta` how fast the cutoff rises with speed (higher:
/// less lag when moving). Speeds are in the filtered value's units per
/// second; the tracker feeds it pixels.
public struct OneEuroFilter: Sendable {
    public struct Parameters: Sendable, Equatable {
        public var minCutoff: Double
        public var beta: Double
        /// Cutoff of the speed estimate itself (the paper's 1 Hz).
        public var derivativeCutoff: Double

        /// Tuned on detector noise of a few pixels at 10–30 fps.
        public static let standard = Parameters(minCutoff: 0.3, beta: 0.01)

        public init(minCutoff: Double, beta: Double, derivativeCutoff: Double = 1) {
            self.minCutoff = minCutoff
            self.beta = beta
            self.derivativeCutoff = derivativeCutoff
        }
    }

    public var parameters: Parameters
    private var last: (time: Double, value: Double, speed: Double)?

    public init(_ parameters: Parameters = .standard) {
        self.parameters = parameters
    }

    /// Filters the sample `value` taken at `time` (seconds). The first
    /// sample, and one that does not move time forward, pass through as is.
    public mutating func filter(_ value: Double, at time: Double) -> Double {
        guard let previous = last, time > previous.time else {
            last = (time, value, last?.speed ?? 0)
            return value
        }
        let dt = time - previous.time
        let speed = Self.smooth(
            from: previous.speed, to: (value - previous.value) / dt,
            factor: Self.factor(cutoff: parameters.derivativeCutoff, dt: dt))
        let cutoff = parameters.minCutoff + parameters.beta * abs(speed)
        let filtered = Self.smooth(from: previous.value, to: value, factor: Self.factor(cutoff: cutoff, dt: dt))
        last = (time, filtered, speed)
        return filtered
    }

    /// Forgets the past: the next sample passes through.
    public mutating func reset() {
        last = nil
    }

    static func factor(cutoff: Double, dt: Double) -> Double {
        let tau = 1 / (2 * Double.pi * cutoff)
        return 1 / (1 + tau / dt)
    }

    static func smooth(from old: Double, to new: Double, factor: Double) -> Double {
        old + factor * (new - old)
    }
}
