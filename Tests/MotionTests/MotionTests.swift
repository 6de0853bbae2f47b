import Motion
import Testing

/// A repeatable stand-in for the detector's jitter: a linear congruential generator.
struct Jitter {
    var state: UInt64

    /// A value in -amplitude...amplitude.
    mutating func next(_ amplitude: Double) -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (Double(state >> 11) / Double(1 << 53) * 2 - 1) * amplitude
    }
}

@Suite("a moving target's motion, from the recent frames")
struct TargetMotionTests {
    /// A track at 30 fps from `start` to `end` seconds: `path` gives the pan angle at a time, tilt stays at 80.
    static func track(
        from start: Double, to end: Double, jitter amplitude: Double = 0.3, dropping dropped: (Int) -> Bool = { _ in false },
        _ path: (Double) -> Double
    ) -> [TargetMotion.Sample] {
        var jitter = Jitter(state: 7)
        return stride(from: start, through: end, by: 1.0 / 30).enumerated().compactMap { index, time in
            let (pan, tilt) = (path(time) + jitter.next(amplitude), 80 + jitter.next(amplitude))
            return dropped(index) ? nil : TargetMotion.Sample(time: time, pan: pan, tilt: tilt)
        }
    }

    @Test("a person crossing at 28.6°/s (1 m/s at 2 m) with a detector's ±0.3° of jitter: the speed within 2°/s, the position within 0.3°, consistent")
    func constantSpeed() throws {
        var motion = TargetMotion()
        for sample in Self.track(from: 0, to: 1, { 60 + 28.6 * $0 }) { motion.add(sample) }
        let estimate = try #require(motion.estimate)
        #expect(abs(estimate.panSpeed - 28.6) < 2 && abs(estimate.tiltSpeed) < 2, "\(estimate)")
        #expect(abs(estimate.pan - (60 + 28.6 * estimate.time)) < 0.3, "\(estimate)")
        #expect(estimate.deviation < 0.3 && estimate.speedError < 2, "\(estimate)")
        // Predicted 0.3 s ahead: where the person will be.
        #expect(abs(estimate.position(at: estimate.time + 0.3).pan - (60 + 28.6 * (estimate.time + 0.3))) < 1)
    }

    @Test("dropped frames (every third, and a 0.1 s gap) change nothing: the window is of time, not of frames")
    func droppedFrames() throws {
        var motion = TargetMotion()
        let track = Self.track(from: 0, to: 1, dropping: { $0 % 3 == 0 || (24...26).contains($0) }) { 100 - 20 * $0 }
        for sample in track { motion.add(sample) }
        let estimate = try #require(motion.estimate)
        #expect(abs(estimate.panSpeed + 20) < 2.5 && estimate.deviation < 0.3, "\(estimate)")
    }

    @Test("a reversal inside the window is not a straight line: the positions stray from it by nearly 2°, against the jitter's 0.25°")
    func reversal() throws {
        var motion = TargetMotion()
        for sample in Self.track(from: 0, to: 1.2, { $0 < 1 ? 60 + 30 * $0 : 90 - 30 * ($0 - 1) }) { motion.add(sample) }
        let estimate = try #require(motion.estimate)
        #expect(estimate.deviation > 1 && estimate.uncertainty(leading: 0.3) > 2, "\(estimate)")
        // Once the window holds only the way back, it is straight again.
        for sample in Self.track(from: 1.2 + 1.0 / 30, to: 1.8, { 90 - 30 * ($0 - 1) }) { motion.add(sample) }
        let after = try #require(motion.estimate)
        #expect(abs(after.panSpeed + 30) < 2.5 && after.deviation < 0.3, "\(after)")
    }

    @Test("with breakAt, a stop, a start and a turn each restart the window within five frames; a steady walk's jitter never does")
    func walkChanges() throws {
        func motion(through track: [TargetMotion.Sample]) -> TargetMotion {
            var motion = TargetMotion(breakAt: (samples: 5, speedChange: 3.5))
            for sample in track { motion.add(sample) }
            return motion
        }
        // Walking at 23°/s until 1 s, then standing: five frames later the speed is the stand's.
        let stop = motion(through: Self.track(from: 0, to: 1 + 5 / 30.0, jitter: 0.1) { 60 + 23 * min($0, 1) })
        #expect(try abs(#require(stop.estimate).panSpeed) < 3 && stop.recent.count < 12, "\(stop.recent.count) samples, \(String(describing: stop.estimate))")
        // Standing, then walking from 1 s.
        let start = motion(through: Self.track(from: 0, to: 1 + 5 / 30.0, jitter: 0.1) { 60 + 23 * max($0 - 1, 0) })
        #expect(try abs(#require(start.estimate).panSpeed - 23) < 4, "\(start.recent.count) samples")
        // Turning back at 1 s.
        let turn = motion(through: Self.track(from: 0, to: 1 + 5 / 30.0, jitter: 0.1) { $0 < 1 ? 60 + 23 * $0 : 83 - 23 * ($0 - 1) })
        #expect(try #require(turn.estimate).panSpeed < -18, "\(turn.recent.count) samples, \(String(describing: turn.estimate))")
        // Ten seconds of a steady walk with ±0.3° of jitter: the window stays whole.
        var steady = TargetMotion(breakAt: (samples: 5, speedChange: 3.5))
        for sample in Self.track(from: 0, to: 10, { 30 + 12 * $0 }) {
            steady.add(sample)
            if sample.time > 0.5 { #expect(steady.recent.count >= 11, "restarted at \(sample.time) s") }
        }
    }

    @Test("a walk's legs: a stop or a turn ends one, a change of pace does not; stands and the first leg seen are no legs; two needed")
    func legs() {
        var legs = WalkLegs()
        // Walking right when first seen, a change of pace at 0.5 (the first change: where that leg began is unknown);
        // turning at 1.0 and 1.8; quicker at 2.4 (no end); turning at 3.0; stopping at 4.2 for a second; on at 5.2.
        let changes: [(restartedAt: Double?, heading: Int)] = [
            (nil, 1), (0.5, 1), (1.0, -1), (1.8, 1), (1.8, 1), (2.4, 1), (3.0, -1), (4.2, 0), (5.2, 1),
        ]
        var latest: [Double?] = []
        for change in changes {
            legs.update(restartedAt: change.restartedAt, heading: change.heading)
            latest.append(legs.latestArrival)
        }
        // Legs 1.0-1.8 (0.8 s), 1.8-3.0 (1.2 s, through the change of pace), 3.0-4.2 (1.2 s); 0.5-1.0 began unseen; the stand none.
        #expect(legs.lengths.map { ($0 * 10).rounded() / 10 } == [0.8, 1.2, 1.2])
        #expect(latest[...5].allSatisfy { $0 == nil }, "one leg is not yet a rhythm: \(latest)")
        #expect(latest[6].map { abs($0 - 3.8) < 1e-9 } == true, "3.0 + the shortest, 0.8: \(latest)")
        #expect(latest[8].map { abs($0 - 6.0) < 1e-9 } == true, "5.2 + 0.8: \(latest)")
        legs.reset()
        #expect(legs.lengths.isEmpty && legs.latestArrival == nil)
    }

    @Test("standing still: no speed to speak of, whatever the jitter")
    func standingStill() throws {
        var motion = TargetMotion()
        for sample in Self.track(from: 0, to: 1, jitter: 0.5, { _ in 90 }) { motion.add(sample) }
        let estimate = try #require(motion.estimate)
        #expect(abs(estimate.panSpeed) < 2.5 && abs(estimate.pan - 90) < 0.5, "\(estimate)")
        #expect(estimate.deviation < 0.5, "\(estimate)")
    }

    @Test("another face (a reset): no estimate until the new track has its samples; an older sample is ignored")
    func targetSwitch() throws {
        var motion = TargetMotion(minimumSamples: 4)
        for sample in Self.track(from: 0, to: 0.5, { 60 + 30 * $0 }) { motion.add(sample) }
        #expect(motion.estimate != nil)
        motion.reset()
        let next = Self.track(from: 0.6, to: 0.7, jitter: 0, { _ in 120 })
        for sample in next.prefix(3) { motion.add(sample) }
        #expect(motion.estimate == nil, "three samples of the new face are not yet a motion")
        motion.add(next[3])
        motion.add(TargetMotion.Sample(time: 0.1, pan: 0, tilt: 0))
        let estimate = try #require(motion.estimate)
        #expect(abs(estimate.pan - 120) < 1e-9 && abs(estimate.panSpeed) < 1e-9 && motion.recent.count == 4)
    }
}

@Suite("when and where a shot meets a moving target")
struct InterceptTests {
    /// The earliest τ (to `step`) at which the turret is ready, by trying them in order; nil within `horizon`.
    static func search(_ problem: Intercept, step: Double = 1e-4, horizon: Double = 10) -> Double? {
        var τ = 0.0
        while τ <= horizon {
            if problem.lateness(shotAfter: τ) <= 0 { return τ }
            τ += step
        }
        return nil
    }

    @Test("the closed form agrees with a numeric search on 500 problems: targets ahead, behind, still, fast, and out of reach")
    func againstSearch() {
        var random = Jitter(state: 42)
        var solved = 0
        for _ in 0..<500 {
            let problem = Intercept(
                target: 90 + random.next(50), targetSpeed: random.next(80), turret: 90 + random.next(50), servoSpeed: 300 + random.next(150),
                settle: 0.1 + random.next(0.1) + 0.1, delay: 0.25 + random.next(0.2))
            let searched = Self.search(problem)
            let shot = problem.earliest
            #expect((shot == nil) == (searched == nil), "\(problem): \(String(describing: shot)) against \(String(describing: searched))")
            if let shot, let searched {
                #expect(abs(shot.after - searched) <= 1e-4 + 1e-9, "\(problem): \(shot.after) against \(searched)")
                #expect(abs(shot.aim - problem.aim(shotAfter: shot.after)) < 1e-9)
                solved += 1
            }
        }
        #expect(solved > 400)
    }

    @Test("a still target: the slew plus the settle, aimed where it stands; one out of reach: none")
    func limits() throws {
        let still = try #require(Intercept(target: 120, targetSpeed: 0, turret: 90, servoSpeed: 300, settle: 0.1, delay: 0.3).earliest)
        #expect(abs(still.after - 0.2) < 1e-12 && still.aim == 120)
        // Already there and settled long enough: now.
        #expect(Intercept(target: 90, targetSpeed: 0, turret: 90, servoSpeed: 300, settle: 0, delay: 0.3).earliest == .init(after: 0, aim: 90))
        // Running away faster than the servo turns.
        #expect(Intercept(target: 100, targetSpeed: 400, turret: 90, servoSpeed: 300, settle: 0.1, delay: 0.3).earliest == nil)
        // Coming towards the aim that fast is met where it crosses it: 250 - 400·(0.1 + 0.3) = 90, the turret's, after the 0.1 s settle.
        let oncoming = try #require(Intercept(target: 250, targetSpeed: -400, turret: 90, servoSpeed: 300, settle: 0.1, delay: 0.3).earliest)
        #expect(abs(oncoming.after - 0.1) < 1e-9 && abs(oncoming.aim - 90) < 1e-9, "\(oncoming)")
    }
}
