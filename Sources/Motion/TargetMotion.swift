/// How the followed face moves, in degrees of the turret's angles per second:
/// a straight line fitted to its recent positions (least squares, so the
/// detector's pixel of jitter averages out), over a window of time rather
/// than of frames (a dropped frame shortens nothing), with how far the
/// positions stray from that line: a person who stops or turns back is no
/// straight line, and a lead on such a path is a guess as wide as that.
///
/// A walk that changes (a stop, a start, a turn) restarts the window at
/// the change once its newest few samples show it (`breakAt`): a line still
/// fitted across the change lags it by most of the window, long enough for a
/// dart to be sent after a person who has already stopped.
///
/// Reset it when the followed face changes or comes back: motion is one
/// person's, on one unbroken track.
public struct TargetMotion: Sendable {
    /// One observed position: when the frame was captured, and the face's angles.
    public struct Sample: Sendable, Equatable {
        public var time: Double
        public var pan: Double
        public var tilt: Double

        public init(time: Double, pan: Double, tilt: Double) {
            self.time = time
            self.pan = pan
            self.tilt = tilt
        }
    }

    /// The motion now.
    public struct Estimate: Sendable, Equatable {
        /// Where the line puts the face at the newest sample's time (less jitter than the sample).
        public var pan: Double
        public var tilt: Double
        /// Degrees per second.
        public var panSpeed: Double
        public var tiltSpeed: Double
        /// The newest sample's time, which `pan`/`tilt` are for.
        public var time: Double
        /// Degrees the positions stray from the line (root mean square, both axes):
        /// the detector's jitter on a straight path, more on a stop or a reversal.
        public var deviation: Double
        /// The speed's standard error, degrees per second (both axes).
        public var speedError: Double

        /// The angles the line gives at `time` (seconds on the samples' clock).
        public func position(at time: Double) -> (pan: Double, tilt: Double) {
            (pan + panSpeed * (time - self.time), tilt + tiltSpeed * (time - self.time))
        }

        /// The pan moves at `speed` degrees per second or faster, and its speed
        /// stands three times clear of its own error: a detector's jitter on a
        /// standing face is no walk.
        public func isPanMoving(atLeast speed: Double) -> Bool {
            abs(panSpeed) >= speed && abs(panSpeed) >= 3 * speedError
        }

        /// How far off (degrees) a position predicted `lead` seconds ahead may be:
        /// the stray from the line now, plus the speed's error carried that far.
        public func uncertainty(leading lead: Double) -> Double { deviation + speedError * abs(lead) }
    }

    /// Seconds of samples the line is fitted to.
    public let window: Double
    /// Fewer samples than this in the window give no estimate.
    public let minimumSamples: Int
    private var samples: [Sample] = []

    /// Seconds without a sample after which the motion starts over: the face
    /// came back after a gap, and its walk before it says little of the one after.
    public let longestGap: Double

    /// The newest samples a change of walk is judged on, and the least change
    /// of speed that counts (the units' per second); nil: the window never restarts.
    public let breakAt: (samples: Int, speedChange: Double)?

    public init(window: Double = 0.4, minimumSamples: Int = 4, longestGap: Double = 0.25, breakAt: (samples: Int, speedChange: Double)? = nil) {
        precondition(window > 0 && minimumSamples >= 3 && longestGap > 0 && (breakAt.map { $0.samples >= 3 && $0.speedChange > 0 } ?? true))
        self.window = window
        self.minimumSamples = minimumSamples
        self.longestGap = longestGap
        self.breakAt = breakAt
    }

    /// Adds a frame's position. A sample older than the newest is ignored (time
    /// only goes on); one more than `longestGap` after it starts the motion over.
    public mutating func add(_ sample: Sample) {
        if let last = samples.last, sample.time <= last.time { return }
        if let last = samples.last, sample.time - last.time > longestGap { reset() }
        samples.append(sample)
        let oldest = sample.time - window
        if let keep = samples.firstIndex(where: { $0.time >= oldest }), keep > 0 { samples.removeFirst(keep) }
        if let newest = walkChanged {
            samples.removeFirst(samples.count - newest)
            restartedAt = samples[0].time
        }
    }

    /// When the walk last changed (the oldest sample kept at the restart); nil
    /// without a restart since the track began.
    public private(set) var restartedAt: Double?

    /// How many samples to keep when the newest ones leave the line of those
    /// before them: their speed differs by half the faster one's or more, by
    /// `breakAt.speedChange` or more, and by four times what the jitter alone
    /// would make of the newest ones' speed (the jitter measured on the older
    /// ones, which are more); and they lie on a line of their own. Nil while
    /// the walk holds.
    private var walkChanged: Int? {
        guard let (newest, least) = breakAt, samples.count >= newest + minimumSamples else { return nil }
        let older = samples.dropLast(newest), recent = samples.suffix(newest)
        for axis in [\Sample.pan, \Sample.tilt] {
            let before = Self.line(older.map { ($0.time, $0[keyPath: axis]) }, at: older.last!.time)
            let now = Self.line(recent.map { ($0.time, $0[keyPath: axis]) }, at: recent.last!.time)
            let spread = now.timeSpread
            let change = abs(now.slope - before.slope)
            let jitter = spread > 0 ? before.deviation / spread : .infinity
            // The newest must lie on a line of their own (the change behind them, not among them): the window restarts clean.
            let ownLine = now.deviation <= max(2 * before.deviation, least * spread / 4)
            if ownLine, change >= max(least, max(abs(now.slope), abs(before.slope)) / 2, 4 * jitter) { return newest }
        }
        return nil
    }

    /// Forgets every sample: another face, or the same one after a gap.
    public mutating func reset() {
        samples.removeAll(keepingCapacity: true)
        restartedAt = nil
    }

    /// The samples in the window now, oldest first.
    public var recent: [Sample] { samples }

    /// The motion over the window, or nil with too few samples.
    public var estimate: Estimate? {
        guard samples.count >= minimumSamples, let newest = samples.last else { return nil }
        let pan = Self.line(samples.map { ($0.time, $0.pan) }, at: newest.time)
        let tilt = Self.line(samples.map { ($0.time, $0.tilt) }, at: newest.time)
        return Estimate(
            pan: pan.value, tilt: tilt.value, panSpeed: pan.slope, tiltSpeed: tilt.slope, time: newest.time,
            deviation: (pan.deviation * pan.deviation + tilt.deviation * tilt.deviation).squareRoot(),
            speedError: (pan.slopeError * pan.slopeError + tilt.slopeError * tilt.slopeError).squareRoot())
    }

    /// The least-squares line through `points` (time, value): its value at `time`, its
    /// slope, the points' root mean square distance from it, the slope's standard error,
    /// and the times' spread (the root of their squared distances from their mean: a
    /// jitter of σ makes a slope of about σ / timeSpread).
    static func line(
        _ points: [(time: Double, value: Double)], at time: Double
    ) -> (value: Double, slope: Double, deviation: Double, slopeError: Double, timeSpread: Double) {
        let count = Double(points.count)
        let meanTime = points.reduce(0) { $0 + $1.time } / count
        let meanValue = points.reduce(0) { $0 + $1.value } / count
        var covariance = 0.0, variance = 0.0
        for point in points {
            covariance += (point.time - meanTime) * (point.value - meanValue)
            variance += (point.time - meanTime) * (point.time - meanTime)
        }
        let slope = variance > 0 ? covariance / variance : 0
        let squares = points.reduce(0) { total, point in
            let residual = point.value - (meanValue + slope * (point.time - meanTime))
            return total + residual * residual
        }
        // Two of the points' freedoms went into the line.
        let slopeError = variance > 0 && count > 2 ? (squares / (count - 2) / variance).squareRoot() : 0
        return (meanValue + slope * (time - meanTime), slope, (squares / count).squareRoot(), slopeError, variance.squareRoot())
    }
}
