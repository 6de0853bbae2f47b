import Geometry
import Testing
import Tracking
import Turret
import TurretProtocol

@Suite("Lock-on: a target held lock-after seconds")
struct LockOnTests {
    let a = Box(x: 100, y: 100, width: 80, height: 80)
    let b = Box(x: 400, y: 100, width: 90, height: 90)

    @Test("locks once after lock-after seconds in sight, and reports the loss once when the target is let go")
    func lockAndLoss() {
        var lock = LockOn(lockAfter: 2)
        var events: [LockOn.Event?] = []
        for frame in 0...90 { events.append(lock.update(targetID: 1, box: a, at: Double(frame) / 30)) }
        #expect(events.compactMap { $0 } == [.locked(a)])
        #expect(events.firstIndex { $0 != nil } == 60)
        #expect(lock.update(targetID: nil, box: nil, at: 3.1) == .lost(a))
        #expect(lock.update(targetID: nil, box: nil, at: 3.2) == nil)
        #expect(!lock.isLocked)
    }

    @Test("a target held out of sight stays locked; the loss reports where it was last seen")
    func heldOutOfSight() {
        var lock = LockOn(lockAfter: 0.5)
        _ = lock.update(targetID: 7, box: a, at: 0)
        #expect(lock.update(targetID: 7, box: a, at: 0.5) == .locked(a))
        #expect(lock.update(targetID: 7, box: nil, at: 0.6) == nil)
        #expect(lock.isLocked)
        #expect(lock.update(targetID: nil, box: nil, at: 1.0) == .lost(a))
    }

    @Test("another face taking over: the loss first, then the new target's own lock-after")
    func takeOver() {
        var lock = LockOn(lockAfter: 1)
        _ = lock.update(targetID: 1, box: a, at: 0)
        #expect(lock.update(targetID: 1, box: a, at: 1) == .locked(a))
        #expect(lock.update(targetID: 2, box: b, at: 1.5) == .lost(a))
        #expect(lock.update(targetID: 2, box: b, at: 2.4) == nil)
        #expect(lock.update(targetID: 2, box: b, at: 2.5) == .locked(b))
    }

    @Test("a target never seen long enough never locks, and its going is no loss")
    func neverLocked() {
        var lock = LockOn(lockAfter: 2)
        #expect(lock.update(targetID: 1, box: a, at: 0) == nil)
        #expect(lock.update(targetID: 1, box: a, at: 1.9) == nil)
        #expect(lock.update(targetID: nil, box: nil, at: 2.1) == nil)
    }
}

@Suite("Fire control: only locked, aimed, still and paced")
struct FireControlTests {
    /// A turret told `X90.` at 0 s, at rest by `time`.
    static func turret(pan: Int = 90, at time: Double = 0) -> TurretModel {
        var turret = TurretModel()
        turret.receive(.pan(pan), at: time)
        return turret
    }

    /// `command` on the wire at `time`, frame and wire clocks alike: into the turret's model and the fire control's.
    static func send(_ command: Command, at time: Double, to turret: inout TurretModel, _ fire: inout FireControl) {
        turret.receive(command, at: time)
        fire.sent([command], wireTime: time)
    }

    @Test("locked, aimed within the tolerance, settled: F with the pan the firmware holds")
    func fires() {
        var fire = FireControl(.init(tolerance: 2, cooldown: 3))
        var turret = TurretModel()
        Self.send(.pan(93), at: 0, to: &turret, &fire)
        #expect(fire.shot(locked: true, aimError: (1.5, -1.5), turret: turret, at: 1, wireTime: 1) == .fire(93))
    }

    @Test("aims written late, in a burst after a stall: the shot waits for the horn's travel and settling on the wire's clock, as the firmware times them")
    func lateAims() {
        var fire = FireControl(.init())
        var turret = TurretModel()
        Self.send(.pan(90), at: 0, to: &turret, &fire)
        // The frame of 1 s told 90 → 150 (60°: 0.2 s of travel), but its bytes went out at 1.3 s on the wire's clock.
        turret.receive(.pan(150), at: 1)
        fire.sent([.pan(150)], wireTime: 1.3)
        // By the frames' clock the horn stood at 150 since 1.2 s; on the wire the firmware has it arrive at 1.5, settled at 1.6.
        #expect(fire.shot(locked: true, aimError: (0, 0), turret: turret, at: 1.45, wireTime: 1.45) == nil)
        #expect(fire.shot(locked: true, aimError: (0, 0), turret: turret, at: 1.6, wireTime: 1.6) == nil)
        #expect(fire.shot(locked: true, aimError: (0, 0), turret: turret, at: 1.66, wireTime: 1.66) == .fire(150))
        // Nothing on the wire at all: the firmware has no aim, the host does not ask.
        var silent = FireControl(.init())
        #expect(silent.shot(locked: true, aimError: (0, 0), turret: Self.turret(), at: 5, wireTime: 5) == nil)
    }

    @Test("not locked, no target in sight, or aimed off by more than the tolerance on either axis: no shot")
    func refuses() {
        var fire = FireControl(.init(tolerance: 2, cooldown: 3))
        var turret = TurretModel()
        Self.send(.pan(90), at: 0, to: &turret, &fire)
        #expect(fire.shot(locked: false, aimError: (0, 0), turret: turret, at: 1, wireTime: 1) == nil)
        #expect(fire.shot(locked: true, aimError: nil, turret: turret, at: 1, wireTime: 1) == nil)
        #expect(fire.shot(locked: true, aimError: (2.5, 0), turret: turret, at: 1, wireTime: 1) == nil)
        #expect(fire.shot(locked: true, aimError: (0, -2.5), turret: turret, at: 1, wireTime: 1) == nil)
    }

    @Test("a turret still on its way, an aim not yet settled, or a sweep: no shot")
    func turretNotReady() {
        var fire = FireControl(.init())
        // Told 90 → 150 at 1 s: 60° take a loaded servo 0.2 s.
        var moving = TurretModel()
        Self.send(.pan(90), at: 0, to: &moving, &fire)
        Self.send(.pan(150), at: 1, to: &moving, &fire)
        #expect(fire.shot(locked: true, aimError: (0, 0), turret: moving, at: 1.15, wireTime: 1.15) == nil)
        // There, but the firmware wants 100 ms of a standing aim after the horn can have arrived, and the host 50 ms more for the wire.
        #expect(fire.shot(locked: true, aimError: (0, 0), turret: moving, at: 1.32, wireTime: 1.32) == nil)
        #expect(fire.shot(locked: true, aimError: (0, 0), turret: moving, at: 1.36, wireTime: 1.36) == .fire(150))
        var sweeping = TurretModel()
        var duringSweep = FireControl(.init())
        Self.send(.pan(90), at: 0, to: &sweeping, &duringSweep)
        Self.send(.lost, at: 1, to: &sweeping, &duringSweep)
        #expect(duringSweep.shot(locked: true, aimError: (0, 0), turret: sweeping, at: 2, wireTime: 2) == nil)
        // Since boot, never aimed: the firmware would refuse, so the host does not ask.
        var fresh = FireControl(.init())
        #expect(fresh.shot(locked: true, aimError: (0, 0), turret: TurretModel(), at: 5, wireTime: 5) == nil)
    }

    @Test("at most once per cooldown, and never within the firmware's own minimum interval")
    func cooldown() {
        var fire = FireControl(.init(cooldown: 2))
        var turret = TurretModel()
        Self.send(.pan(90), at: 0, to: &turret, &fire)
        var shots: [Double] = []
        for frame in 30...300 {
            let time = Double(frame) / 30
            if let shot = fire.shot(locked: true, aimError: (0, 0), turret: turret, at: time, wireTime: time) {
                shots.append(time)
                turret.receive(shot, at: time)
            }
        }
        #expect(shots.count == 5)
        let gaps = zip(shots.dropFirst(), shots).map { (later: Double, earlier: Double) in later - earlier }
        #expect(gaps.allSatisfy { $0 >= 2 && $0 < 2 + 1.5 / 30 })
    }

    @Test("the cooldown counts from when the shot was written, not from when its frame decided it")
    func cooldownFromTheWrite() {
        var fire = FireControl(.init(cooldown: 2))
        var turret = TurretModel()
        Self.send(.pan(90), at: 0, to: &turret, &fire)
        #expect(fire.shot(locked: true, aimError: (0, 0), turret: turret, at: 1, wireTime: 1) == .fire(90))
        turret.receive(.fire(90), at: 1)
        // A busy host handed the bytes to the port 40 ms after the frame decided.
        fire.written(at: 1.04)
        #expect(fire.cooldownLeft(at: 3.02) > 0.019)
        #expect(fire.shot(locked: true, aimError: (0, 0), turret: turret, at: 3.02, wireTime: 3.02) == nil)
        #expect(fire.shot(locked: true, aimError: (0, 0), turret: turret, at: 3.04, wireTime: 3.04) == .fire(90))
        // A write noted for no shot, or one that seems earlier, moves nothing back.
        var unarmed = FireControl(.init(cooldown: 2))
        unarmed.written(at: 5)
        #expect(unarmed.cooldownLeft(at: 5) == 0)
        fire.written(at: 3)
        #expect(fire.cooldownLeft(at: 5.03) > 0)
    }
}

@Suite("The tracker's aim error, what the fire control reads")
struct AimErrorTests {
    @Test("fixed mount: the mapped angle less where the modelled turret points")
    func fixed() {
        var tracker = Tracker(settings: TrackingSettings(mapper: AngleMapper(), tiltEnabled: true))
        var turret = TurretModel()
        let face = Box(x: 400, y: 200, width: 80, height: 80)  // centre 440,240 → pan 108.75, tilt 90
        _ = tracker.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0)
        // The turret has not been told anything: it stands at 90.
        #expect(abs(tracker.aimError!.pan - 18.75) < 1e-9 && abs(tracker.aimError!.tilt) < 1e-9)
        for command: Command in [.pan(108), .tilt(90)] { turret.receive(command, at: 0) }
        _ = tracker.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 1)
        #expect(abs(tracker.aimError!.pan - 0.75) < 1e-9)
        _ = tracker.update(faces: [], frameWidth: 640, frameHeight: 480, turret: &turret, at: 1.1)
        #expect(tracker.aimError == nil)
    }

    @Test("turret mount: the face's angle from the frame centre; tilt counts only with --tilt")
    func turret() {
        var settings = TrackingSettings()
        settings.mount = .turret
        var tracker = Tracker(settings: settings)
        var turret = TurretModel()
        let face = Box(x: 320, y: 300, width: 64, height: 64)  // centre 352,332: +3° pan at 60° over 640 px
        _ = tracker.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0)
        #expect(abs(tracker.aimError!.pan - 3) < 1e-9 && tracker.aimError!.tilt == 0)
    }

    @Test("armed, the turret aims at the fire point: 1.5 face heights below the face's centre, kept in the frame; the error is measured there")
    func firePoint() {
        var settings = TrackingSettings(mapper: AngleMapper(), tiltEnabled: true)
        settings.aimBelow = 1.5
        var tracker = Tracker(settings: settings)
        var turret = TurretModel()
        let face = Box(x: 400, y: 100, width: 80, height: 80)  // centre 440,140; fire point 440,260 → tilt 40 + 260·100/480 = 94.17
        let (_, intent) = tracker.update(faces: [face], frameWidth: 640, frameHeight: 480, turret: &turret, at: 0)
        // The whole degree below the point (95), not SPEC §2's truncation toward the face (94).
        #expect(intent == .aim(Aim(pan: 108, tilt: 95)))
        #expect(abs(tracker.aimError!.tilt - (40 + 26_000.0 / 480 - 90)) < 1e-9)
        // Near the bottom edge the point stays in the frame.
        #expect(settings.aimPoint(of: Box(x: 0, y: 400, width: 80, height: 80), frameHeight: 480).y == 479)
        // Unarmed (0): SPEC §2's centre.
        #expect(TrackingSettings().aimPoint(of: face, frameHeight: 480) == (x: 440, y: 140))
    }
}
