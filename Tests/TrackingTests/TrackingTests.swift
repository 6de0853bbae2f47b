import Geometry
import Testing
import Turret
import TurretProtocol
import Tracking

/// Deterministic ±`amplitude` noise (a linear congruential generator).
struct Jitter {
    var state: UInt64
    let amplitude: Double

    mutating func next() -> Double {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return (Double(state >> 11) / Double(1 << 53) * 2 - 1) * amplitude
    }
}

@Suite("One Euro smoothing and steady whole degrees")
struct SmoothingTests {
    @Test("a still value with ±3 px noise comes out at least 3 times steadier")
    func stillIsSteady() {
        var filter = OneEuroFilter()
        var noise = Jitter(state: 7, amplitude: 3)
        var outputs: [Double] = []
        for frame in 0..<300 {
            let value = filter.filter(320 + noise.next(), at: Double(frame) / 30)
            if frame >= 60 { outputs.append(value) }
        }
        let mean = outputs.reduce(0, +) / Double(outputs.count)
        let deviation = (outputs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(outputs.count)).squareRoot()
        // Uniform ±3 px noise has a standard deviation of 3/√3 = 1.73 px.
        #expect(deviation < 1.73 / 3, "standard deviation \(deviation) px after settling")
    }

    @Test("a face moving at 300 px/s is followed within two frames' travel")
    func movingFollows() {
        var filter = OneEuroFilter()
        var lag = 0.0
        for frame in 0..<60 {
            let t = Double(frame) / 30
            let value = filter.filter(100 + 300 * t, at: t)
            if frame > 20 { lag = max(lag, 100 + 300 * t - value) }
        }
        #expect(lag <= 2 * 300 / 30, "lag \(lag) px")
    }

    @Test("a value on a degree boundary does not flip the degree back and forth")
    func steadyDegree() {
        var steady = SteadyDegree()
        #expect(steady.degree(for: 90.02, rounding: .towardZero) == 90)
        for value in [89.98, 90.1, 89.9, 90.05, 89.75] {
            #expect(steady.degree(for: value, rounding: .towardZero) == 90)
        }
        #expect(steady.degree(for: 89.6, rounding: .towardZero) == 89)
        #expect(steady.degree(for: 91.31, rounding: .towardZero) == 91)
    }
}

@Suite("Face identities and the sticky target")
struct StickyTargetTests {
    func box(_ x: Int, _ y: Int, _ size: Int) -> Box { Box(x: x, y: y, width: size, height: size) }

    @Test("a face that moves keeps its identity; a new face gets a new one")
    func identities() {
        var tracks = FaceTracks(forgetAfter: 1)
        let first = tracks.update(with: [box(100, 100, 80)], at: 0)
        let moved = tracks.update(with: [box(130, 104, 82), box(400, 100, 80)], at: 0.1)
        #expect(moved.count == 2)
        #expect(moved.first { $0.box == box(130, 104, 82) }?.id == first[0].id)
        #expect(moved.first { $0.box == box(400, 100, 80) }?.id != first[0].id)
        // Unseen for longer than forgetAfter: forgotten.
        let later = tracks.update(with: [], at: 1.5)
        #expect(later.isEmpty)
    }

    @Test("two faces of about the same size: the first target stays the target")
    func noFlipFlop() {
        var tracks = FaceTracks(forgetAfter: 1)
        var sticky = StickyTarget()
        var targets: Set<Int> = []
        for frame in 0..<100 {
            // Sizes alternate which one is larger by 10 %: below the 20 % margin.
            let (a, b) = frame.isMultiple(of: 2) ? (100, 105) : (105, 100)
            let faces = tracks.update(with: [box(100 + frame * 4, 50, a), box(500 - frame * 4, 300, b)], at: Double(frame) / 30)
            targets.insert(sticky.choose(among: faces, at: Double(frame) / 30)!.id)
        }
        #expect(targets.count == 1)
    }

    @Test("a face larger by the margin for switch-frames frames takes over; fewer frames do not")
    func marginRule() {
        var tracks = FaceTracks(forgetAfter: 1)
        var sticky = StickyTarget(switchMargin: 0.2, switchFrames: 3)
        func frame(_ n: Int, bigger: Bool) -> Int {
            let faces = tracks.update(with: [box(100, 100, 100), box(400, 100, bigger ? 115 : 100)], at: Double(n) / 30)
            return sticky.choose(among: faces, at: Double(n) / 30)!.box.x
        }
        #expect(frame(0, bigger: false) == 100)
        #expect(frame(1, bigger: true) == 100)
        #expect(frame(2, bigger: true) == 100)
        #expect(frame(3, bigger: false) == 100)  // the run is broken: count again
        #expect(frame(4, bigger: true) == 100)
        #expect(frame(5, bigger: true) == 100)
        #expect(frame(6, bigger: true) == 400)  // 1.3225x the area, three frames running
    }

    @Test("switch margin 0 and one frame is SPEC §1.3: the largest box every frame")
    func specSelection() {
        var tracks = FaceTracks(forgetAfter: 1)
        var sticky = StickyTarget(switchMargin: 0, switchFrames: 1)
        var selector = TargetSelector()
        for frame in 0..<20 {
            let (a, b) = frame % 3 == 0 ? (100, 101) : (101, 100)
            let boxes = [box(100, 50, a), box(400, 300, b)]
            let faces = tracks.update(with: boxes, at: Double(frame) / 30)
            #expect(sticky.choose(among: faces, at: Double(frame) / 30)?.box == selector.select(from: boxes))
        }
    }

    @Test("a target out of sight is held for lost-after seconds, then the other face takes over")
    func heldThenDropped() {
        var tracks = FaceTracks(forgetAfter: 2)
        var sticky = StickyTarget(lostAfter: 1)
        let big = box(100, 100, 120), small = box(400, 100, 60)
        let id = sticky.choose(among: tracks.update(with: [big, small], at: 0), at: 0)!.id
        let held = sticky.choose(among: tracks.update(with: [small], at: 0.5), at: 0.5)
        #expect(held?.id == id && held?.isVisible == false)
        #expect(sticky.choose(among: tracks.update(with: [small], at: 1.1), at: 1.1)?.box == small)
    }

    @Test("faces passed over (--target unknown: the household) are the target only alone: let go at once for another, taken again when alone")
    func passedOver() {
        var tracks = FaceTracks(forgetAfter: 2)
        var sticky = StickyTarget()
        let household = box(100, 100, 120), stranger = box(400, 100, 60)
        let faces = tracks.update(with: [household, stranger], at: 0)
        let householdID = faces.first { $0.box == household }!.id
        // Before anyone is recognised: the largest, as ever.
        #expect(sticky.choose(among: faces, at: 0)?.id == householdID)
        // Recognised as the household: the smaller stranger takes over on this frame, no switch-frames wait.
        let both = tracks.update(with: [household, stranger], at: 0.1)
        #expect(sticky.choose(among: both, at: 0.1, passedOver: [householdID])?.box == stranger)
        #expect(sticky.choose(among: tracks.update(with: [household, stranger], at: 0.2), at: 0.2, passedOver: [householdID])?.box == stranger)
        // The stranger gone (and not held: lost-after 0), the household alone is followed.
        #expect(sticky.choose(among: tracks.update(with: [household], at: 0.3), at: 0.3, passedOver: [householdID])?.id == householdID)
        // Every face passed over: the largest of them.
        let other = box(400, 300, 50)
        let crowd = tracks.update(with: [household, other], at: 0.4)
        let otherID = crowd.first { $0.box == other }!.id
        #expect(sticky.choose(among: crowd, at: 0.4, passedOver: [householdID, otherID])?.id == householdID)
    }
}

@Suite("Tracker: lost-target debounce and search policies")
struct TrackerTests {
    let face = Box(x: 300, y: 200, width: 80, height: 80)

    func tracker(_ search: SearchPolicy = .scan, lostAfter: Double = 0, mount: Mount = .fixed) -> Tracker {
        var settings = TrackingSettings()
        settings.search = search
        settings.lostAfter = lostAfter
        settings.mount = mount
        return Tracker(settings: settings)
    }

    @Test("scan: L only after the face has been missing lost-after seconds")
    func debounce() {
        var t = tracker(lostAfter: 1)
        var turret = TurretModel()
        #expect(t.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 10).intent == .aim(Aim(pan: 93, tilt: 90)))
        #expect(t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 10.1).intent == .hold)
        #expect(t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 10.9).intent == .hold)
        #expect(t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 11.1).intent == .scan)
    }

    @Test("a face seen again within lost-after cancels the sweep")
    func debounceCancelled() {
        var t = tracker(lostAfter: 1)
        var turret = TurretModel()
        _ = t.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0)
        #expect(t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0.5).intent == .hold)
        #expect(t.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0.8).intent == .aim(Aim(pan: 93, tilt: 90)))
        #expect(t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 1.5).intent == .hold)
        #expect(t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 1.9).intent == .scan)
    }

    @Test("hold: never a sweep")
    func hold() {
        var t = tracker(.hold, lostAfter: 0.5)
        var turret = TurretModel()
        _ = t.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0)
        for time in stride(from: 0.1, through: 5, by: 0.1) {
            #expect(t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: time).intent == .hold)
        }
    }

    @Test(
        "last-seen: aim at the edge the face left by, then sweep after lost-after",
        arguments: [(Box(x: 0, y: 200, width: 60, height: 60), 40), (Box(x: 590, y: 200, width: 50, height: 60), 140)])
    func lastSeen(leaving: Box, edgePan: Int) {
        var t = tracker(.lastSeen, lostAfter: 1)
        var turret = TurretModel()
        _ = t.update(faces: [leaving], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0)
        guard case .aim(let aim) = t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0.1).intent else {
            Issue.record("no aim at the edge")
            return
        }
        #expect(aim.pan == edgePan)
        #expect(t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0.9).intent == .aim(aim))
        #expect(t.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 1.05).intent == .scan)
    }

    @Test("turret: a face right of centre turns the turret right, by Kp of its angle, toward it")
    func turretStep() {
        var t = tracker(mount: .turret)
        var turret = TurretModel()
        // 160 px right of centre at 60° over 640 px = 15°; Kp 0.7 -> 10.5° (+ nothing integrated yet).
        let box = Box(x: 440, y: 200, width: 80, height: 80)
        #expect(t.update(faces: [box], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0).intent == .aim(Aim(pan: 101, tilt: 90)))
    }
}
