#if canImport(Glibc)
    import Glibc
#endif
import Geometry
import Motion
import Testing
import Tracking
import Turret

@Suite("Leading a walker: wait where dart and person meet, fire when they will")
struct LeadingFireTests {
    let lead = LeadSettings.typical
    /// A face 36 pixels wide at 60° over 640 pixels: about 2.5 m away.
    let faceDegrees = 3.4

    /// Runs a target along `pan(t)` at 30 frames a second from `start` to `end`, with the turret
    /// obeying every aim at once; returns the shots' times and aims.
    func walk(
        _ pan: (Double) -> Double, from start: Double = 0, to end: Double, cooldown: Double = 0, mapper: AngleMapper = AngleMapper(offset: 0)
    ) -> [(time: Double, aim: Int)] {
        var leading = LeadingFire()
        var shots: [(Double, Int)] = []
        var turret = TurretModel(secondsPer60Degrees: 0.2)
        var time = start
        var lastShot = -Double.infinity
        while time < end {
            leading.observe(.init(pan: pan(time), tilt: 95, faceDegrees: faceDegrees, time: time), of: 1)
            if let aim = leading.aim(
                wireNow: time, turret: turret, servoSecondsPer60Degrees: 0.2, mapper: mapper, lead: lead,
                cooldownLeft: max(0, cooldown - (time - lastShot)))
            {
                for byte in "X\(aim.pan).Y\(aim.tilt).".utf8 where turret.controller.pan != aim.pan || turret.controller.tilt != aim.tilt { turret.receive(byte, at: time) }
            }
            turret.advance(to: time)
            if leading.isTimeToFire(wireNow: time, frameInterval: 1 / 30.0, lead: lead), let plan = leading.plan {
                shots.append((time, plan.aim.pan))
                leading.fired(at: time)
                lastShot = time
            }
            time += 1 / 30.0
        }
        return shots
    }

    /// The pan of a person crossing `distance` metres away at `speed` m/s, `start` metres right of straight ahead at time 0.
    static func crossing(speed: Double, distance: Double = 2.5, start: Double) -> (Double) -> Double {
        { time in 90 + atan2(start + speed * time, distance) * 180 / .pi }
    }

    @Test(
        "a person crossing at 1 and 2 m/s, 2.5 m away, from the view's edge: each shot's aim within a degree of where they are as the dart arrives",
        arguments: [1.0, 2.0])
    func steadyWalk(speed: Double) {
        let pan = Self.crossing(speed: speed, start: -1.3)
        let shots = walk(pan, to: 2.6 / speed, cooldown: 0.5)
        #expect(shots.count >= 2)
        let delay = lead.arrivalDelay(range: lead.range(faceSpanningDegrees: faceDegrees))
        for shot in shots {
            let there = pan(shot.time + delay)
            #expect(abs(there - Double(shot.aim)) <= 1, "shot at \(shot.time) s, aim \(shot.aim), walker there \(there)")
        }
        // The first within a second of the motion being known.
        #expect(shots[0].time < 1)
    }

    @Test("a straight walk is read as one: the pan's speed near the edge is a quarter below the middle's, and the walk says when each angle comes")
    func straightWalk() throws {
        var walk = StraightWalk()
        let pan = Self.crossing(speed: 2, start: -1.3)
        for frame in 0..<12 { walk.add(time: Double(frame) / 30, pan: pan(Double(frame) / 30), tilt: 95) }
        let estimate = try #require(walk.estimate)
        // 2 m/s at 2.5 m turns the pan 45.8°/s straight ahead, 35.9°/s where the walk began; at the newest frame:
        let x = -1.3 + 2 * 11 / 30.0
        #expect(abs(estimate.panSpeed - 2 * 2.5 / (x * x + 2.5 * 2.5) * 180 / .pi) < 0.1, "\(estimate.panSpeed)")
        // Half a second ahead, where a line in the angle would be degrees behind.
        let ahead = estimate.position(at: 11 / 30 + 0.5).pan
        #expect(abs(ahead - pan(11 / 30 + 0.5)) < 0.2, "\(ahead) against \(pan(11 / 30 + 0.5))")
        let straightAhead = try #require(estimate.time(reachingPan: 90))
        #expect(abs(straightAhead - 0.65) < 0.01)
    }

    @Test("a standing face's jitter is no walk: no plan, the still aim's rules")
    func jitter() {
        var leading = LeadingFire()
        for frame in 0..<60 {
            let time = Double(frame) / 30
            leading.observe(.init(pan: 90 + (frame % 2 == 0 ? 0.3 : -0.3), tilt: 95, faceDegrees: faceDegrees, time: time), of: 1)
            #expect(!leading.isWalking)
        }
    }

    @Test("a walker who turns back after the plan is made is not shot at: the plan is dropped")
    func reversal() {
        // 20°/s until 0.6 s, then back at 20°/s: a plan made before the turn never fires at the empty point.
        let shots = walk({ $0 < 0.6 ? 70 + 20 * $0 : 82 - 20 * ($0 - 0.6) }, to: 1.2)
        let delay = lead.arrivalDelay(range: lead.range(faceSpanningDegrees: faceDegrees))
        for shot in shots {
            let arrivalTime = shot.time + delay
            let there = arrivalTime < 0.6 ? 70 + 20 * arrivalTime : 82 - 20 * (arrivalTime - 0.6)
            #expect(abs(there - Double(shot.aim)) <= 3, "shot at \(shot.time) s, aim \(shot.aim), walker there \(there)")
        }
    }

    @Test("on a fixed 60° camera no plan waits where the picture ends: every aim keeps the torso's half-width inside the view")
    func insideTheView() {
        // 1 m/s from 0.3 m right of the middle out past the right edge (120°): without --fov plans go up to the edge and past it.
        let pan = Self.crossing(speed: 1, start: 0.3)
        let fixed = AngleMapper(offset: 0, fieldOfView: 60)
        let margin = atan2(1.3 * lead.faceWidth, lead.range(faceSpanningDegrees: faceDegrees)) * 180 / .pi
        let inView = walk(pan, to: 1.6, cooldown: 0.3, mapper: fixed)
        #expect(!inView.isEmpty)
        for shot in inView { #expect(Double(shot.aim) <= 120 - margin, "aim \(shot.aim) within \(margin)° of the view's edge") }
        #expect(walk(pan, to: 1.6, cooldown: 0.3).contains { Double($0.aim) > 120 - margin }, "without --fov the turret's range alone limits the plan")
    }

    @Test("a walker who stops is no still target until they have stood a pause's length beyond the shot's delay; one seen standing from the start is at once")
    func pause() {
        let delay = lead.arrivalDelay(range: lead.range(faceSpanningDegrees: faceDegrees)) + 0.1
        var leading = LeadingFire()
        var firstStillShot: Double?
        // 23°/s for a second, then standing at 93°; the wire 0.1 s after each frame.
        for frame in 0..<90 {
            let time = Double(frame) / 30
            leading.observe(.init(pan: time < 1 ? 70 + 23 * time : 93, tilt: 95, faceDegrees: faceDegrees, time: time), of: 1)
            if time > 1, firstStillShot == nil, leading.isStanding(wireNow: time + 0.1, time: time, lead: lead) { firstStillShot = time }
        }
        let stood = firstStillShot
        #expect(stood.map { $0 >= 1 + delay + LeadingFire.pauseLength - 0.01 && $0 <= 1 + delay + LeadingFire.pauseLength + 0.3 } == true, "\(String(describing: stood)), delay \(delay)")
        var standing = LeadingFire()
        for frame in 0..<5 { standing.observe(.init(pan: 93, tilt: 95, faceDegrees: faceDegrees, time: Double(frame) / 30), of: 1) }
        #expect(standing.isStanding(wireNow: 0.23, time: 4 / 30, lead: lead))
    }

    @Test("a walker who turns back every 0.8-1.2 s: once two legs are seen, every dart arrives before the leg it was fired in ends")
    func turnsOften() {
        // 23°/s between 70° and 97.6° or 88.4°: legs of 1.2 s and 0.8 s in turn.
        let legs = [1.2, 0.8, 1.2, 0.8, 1.2, 0.8, 1.2, 0.8]
        let turns = legs.reduce(into: [0.0]) { $0.append($0.last! + $1) }
        func pan(_ time: Double) -> Double {
            var place = 70.0, way = 1.0
            for (start, end) in zip(turns, turns.dropFirst()) {
                place += way * 23 * (min(time, end) - start)
                if time < end { return place }
                way = -way
            }
            return place
        }
        let shots = walk(pan, to: turns.last!, cooldown: 1)
        let delay = lead.arrivalDelay(range: lead.range(faceSpanningDegrees: faceDegrees))
        let late = shots.filter { $0.time > turns[3] }
        #expect(late.count >= 2, "\(shots)")
        for shot in late {
            let leg = turns.lastIndex { $0 <= shot.time }!
            #expect(shot.time + delay <= turns[leg + 1] + 0.05, "shot at \(shot.time) s arrives at \(shot.time + delay) s, the leg ends at \(turns[leg + 1]) s")
        }
    }

    @Test("another target starts the motion over")
    func newTarget() {
        var leading = LeadingFire()
        for frame in 0..<20 { leading.observe(.init(pan: 70 + Double(frame), tilt: 95, faceDegrees: faceDegrees, time: Double(frame) / 30), of: 1) }
        #expect(leading.isWalking)
        leading.observe(.init(pan: 120, tilt: 95, faceDegrees: faceDegrees, time: 20 / 30), of: 2)
        #expect(!leading.isWalking)
        #expect(leading.motion.sampleCount == 1)
    }
}

@Suite("Armed, the tilt's whole degree is below the fire point, never above it")
struct ArmedTiltRoundingTests {
    @Test("with and without --invert-y, armed aims round the tilt away from the face; unarmed keeps SPEC §2's truncation")
    func awayFromTheFace() {
        for invert in [false, true] {
            var settings = TrackingSettings(mapper: AngleMapper(offset: 40, invertY: invert, fieldOfView: 60), tiltEnabled: true)
            // A face above the turret's level: its fire point at y 200 of 480 → 90 + (200 - 240)·60/640 = 86.25.
            let face = Box(x: 300, y: 80, width: 40, height: 80)  // centre 320,120
            settings.aimBelow = 1
            var tracker = Tracker(settings: settings)
            var turret = TurretModel()
            let (_, armed) = tracker.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0)
            // Fire point y = 120 + 80 = 200: 86.25° (lower in the picture is a larger angle before mirroring).
            #expect(armed == .aim(Aim(pan: 90, tilt: invert ? 180 - 87 : 87)))
            settings.aimBelow = 0
            var unarmedTracker = Tracker(settings: settings)
            let (_, unarmed) = unarmedTracker.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0)
            // Centre y 120: 90 + (120 - 240)·60/640 = 78.75, truncated to 78.
            #expect(unarmed == .aim(Aim(pan: 90, tilt: invert ? 180 - 78 : 78)))
        }
    }
}

@Suite("Unarmed, a walker's aim leads by the picture's age")
struct LatencyLeadTests {
    let mapper = AngleMapper(offset: 40, fieldOfView: 60)

    @Test("a face walking at 20°/s is aimed at where it is 0.1 s after the picture; a standing one is left to the tracker")
    func leads() {
        var lead = LatencyLead()
        var aim: Aim?
        for frame in 0..<15 {
            let time = Double(frame) / 30
            lead.observe(pan: 80 + 20 * time, tilt: 95, of: 1, at: time)
            aim = lead.aim(latency: 0.1, mapper: mapper, slack: 0.3)
        }
        // Seen at 80 + 20·14/30 = 89.33; 0.1 s on: 91.33 → 91.
        #expect(aim == Aim(pan: 91, tilt: 95))
        var still = LatencyLead()
        for frame in 0..<15 {
            still.observe(pan: 90 + (frame % 2 == 0 ? 0.2 : -0.2), tilt: 95, of: 1, at: Double(frame) / 30)
            #expect(still.aim(latency: 0.1, mapper: mapper, slack: 0.3) == nil)
        }
    }

    @Test("--invert-x mirrors the led aim, and another target starts over")
    func mirroredAndRestarted() {
        var lead = LatencyLead()
        let mirrored = AngleMapper(offset: 40, invertX: true, fieldOfView: 60)
        var aim: Aim?
        for frame in 0..<15 {
            let time = Double(frame) / 30
            lead.observe(pan: 80 + 20 * time, tilt: 95, of: 1, at: time)
            aim = lead.aim(latency: 0.1, mapper: mirrored, slack: 0.3)
        }
        #expect(aim == Aim(pan: 180 - 91, tilt: 95))
        lead.observe(pan: 120, tilt: 95, of: 2, at: 0.5)
        #expect(lead.aim(latency: 0.1, mapper: mirrored, slack: 0.3) == nil)
    }
}
