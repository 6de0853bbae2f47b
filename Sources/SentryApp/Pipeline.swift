import Events
import Expressions
import FaceRecognition
import FaceDetection
import Geometry
import Imaging
import MonotonicTime
import Serial
import Tracking
import Turret
import TurretLinks
import TurretProtocol
import Video

/// How the pipeline turns faces into commands.
public struct PipelineSettings: Sendable {
    public var tracking: TrackingSettings
    /// Ignore aim changes of at most this many degrees (on the wire).
    public var deadband: Int
    /// Seconds a target must be held to be locked (`--lock-after`).
    public var lockAfter: Double = 2
    /// When to send the fire command; `nil` (no `--fire`): never, and
    /// nothing new goes on the wire.
    public var fire: FireControl.Settings?
    /// How long a shot takes to arrive (`--trigger-delay`, `--muzzle-speed`), and how far faces are.
    public var lead = LeadSettings.typical
    /// `--lead`: unarmed, a walker's aim leads by the frame's age at the wire.
    public var leadsUnarmed = true
    /// The turret's clock, by which the firmware times its fire rules: the
    /// wall clock for real hardware, the frames' for the virtual camera's
    /// simulated servo.
    public var turretClock = TurretClock.wall
    /// `--spare STATE`: never fire at a target whose face shows it (`--expressions`).
    public var spare: ExpressionState?
    /// `--spare known` or `--spare NAME`: never fire at them (`--known`), nor at a target not recognised yet.
    public var sparedPeople: SparedPeople?
    /// `--target unknown`: with several faces in view, never one of the household (`--known`).
    public var targetsStrangers = false
    /// `--fire-below`: face heights under the face's centre where the turret fires, and
    /// (armed) aims; the console shows it armed or not.
    public var firePointBelow: Double = 1.5
    /// `--trim-x`, `--trim-y`: degrees the wire's angles carry beyond SPEC §2's.
    public var trim = ServoTrim()
    /// `--pan-only-below-heads`: the blaster has no tilt servo and is mounted
    /// below head height, so its shots pass under faces whatever the picture
    /// says; without it, an armed sentry fires only with the tilt aiming the
    /// fire point.
    public var panOnlyBelowHeads = false

    public init(tracking: TrackingSettings = TrackingSettings(), deadband: Int = 0) {
        self.tracking = tracking
        self.deadband = deadband
    }

    public var tiltEnabled: Bool { tracking.tiltEnabled }
}

/// Which clock the turret lives by.
public enum TurretClock: Sendable {
    /// The wall clock (monotonic): a real board, or a simulator in real time.
    case wall
    /// The frames' timestamps: the simulated servo on the frame clock.
    case frames

    /// The time on this clock, given the wall clock's (`wall`) and the frame's.
    func time(wall: Double, frame: Frame) -> Double { self == .wall ? wall : frame.timestamp }
}

/// A face the detector found, with its confidence (nil for detectors without scores).
public struct DetectedFace: Sendable, Equatable {
    public var box: Box
    public var score: Float?
}

/// What the pipeline did with one frame.
public struct FrameResult: Sendable {
    public var index: Int
    public var timestamp: Double
    /// Every face found, each with its score.
    public var detections: [DetectedFace]
    /// The face whose landmarks were found (`--expressions`), with its reading and states.
    public var followedFace: FollowedFace?
    /// The target, when it is in sight this frame.
    public var target: Box?
    /// What the tracker asked for.
    public var intent: Intent
    /// The commands this frame handed to the serial link (after de-duplication).
    public var commands: [Command]
    /// The target is locked (held `--lock-after` seconds).
    public var isLocked: Bool
    /// The lock was gained or lost this frame.
    public var lockEvent: LockOn.Event?
    /// What happened that is worth a record (a lock, a shot, an arrival, an expression rule).
    public var events: [FrameEvent]
    /// The tracker's number for the target (a new number, a new target).
    public var targetID: Int?
    /// Every face the tracker follows (in sight, or held out of it a moment), by number.
    public var tracks: [TrackedFace] = []
    /// Who the target is (`--known`), once read.
    public var person: PersonMatch?
    /// The target showed the `--spare` state: no shot this frame.
    public var spared: ExpressionState?
    /// Armed and locked, but no shot may be taken at this target now (the fire point is on a face).
    public var heldFire: HeldFire?
    /// The angles the turret holds once this frame's commands arrive.
    public var commanded: Aim
    /// Armed at a walker: where the turret waits for the shot (the lead's plan, as sent), nil without one.
    public var leadAim: Aim?
    /// When the commands were handed to the port, on the turret's clock
    /// (`TurretClock`): the moment a shot's cooldown counts from.
    public var sentAt: Double
    /// Seconds spent per stage.
    public var detectSeconds: Double
    public var selectAndMapSeconds: Double
    public var writeSeconds: Double

    /// The faces' boxes.
    public var faces: [Box] { detections.map(\.box) }

    /// Who the target is, as the status and the events say it: a name, or `stranger`; nil until read.
    public var personName: String? { person.map { $0.name ?? EventRecord.stranger } }

    /// The aim asked for, if any.
    public var aim: Aim? {
        if case .aim(let aim) = intent { aim } else { nil }
    }
}

/// One frame at a time (SPEC §1): detect → track and choose → aim → filter → write.
public final class Pipeline {
    public private(set) var detector: any FaceDetector
    /// The detector's name, for the status and the console.
    public private(set) var detectorName: String
    /// The link, behind the trim: every command goes out through it.
    public var output: any CommandOutput { wire }
    private let wire: TrimmedCommandOutput
    public private(set) var settings: PipelineSettings
    /// Who points the turret; fire only ever follows tracking.
    public private(set) var steering = Steering.tracking
    private var tracker: Tracker
    /// What the turret was told: the one record the filter, the tracker, fire and a reconnection read.
    private var turret: TurretState
    private var lock: LockOn
    private var fire: FireControl?
    /// Armed at a walking target: where and when dart and person meet.
    private var lead = LeadingFire()
    /// Unarmed at a walker: the aim where the person is at the wire (`--lead`).
    private var latencyLead = LatencyLead()
    /// The timestamp of the last frame processed.
    public private(set) var lastFrameTime = 0.0
    private var expressions = ExpressionReader()
    /// The followed face as the last frame read it: `--spare` holds fire on the next.
    private var lastFollowed: FollowedFace?
    private var eventFinder: FrameEventFinder
    /// Who each target is (`--known`): read off the frame loop, asked here.
    private let identities: (any FaceIdentities)?

    /// `expressionRules`: the `--on-expression` rules, whose firing is an event.
    public init(
        detector: any FaceDetector, detectorName: String = "", output: any CommandOutput, settings: PipelineSettings, expressionRules: [ExpressionRule] = [],
        identities: (any FaceIdentities)? = nil
    ) {
        self.identities = identities
        self.detector = detector
        self.detectorName = detectorName
        wire = TrimmedCommandOutput(output, trim: settings.trim)
        self.settings = settings
        tracker = Tracker(settings: settings.tracking)
        turret = TurretState(
            deadband: settings.deadband, tiltEnabled: settings.tiltEnabled, secondsPer60Degrees: settings.tracking.servoSecondsPer60Degrees)
        lock = LockOn(lockAfter: settings.lockAfter)
        fire = settings.fire.map(FireControl.init)
        eventFinder = FrameEventFinder(rules: expressionRules)
    }

    /// Runs one frame through every stage and writes its commands.
    public func process(_ frame: Frame) throws(LinkError) -> FrameResult {
        // Fire is held while the target showed the `--spare` state on the frame before.
        let spared = settings.spare.flatMap { spare in lastFollowed.flatMap { $0.isTarget && $0.states.contains(spare) ? spare : nil } }
        let t0 = monotonicSeconds()
        var faces: [Box] = []
        detector.detectFaces(in: frame.image, colour: frame.chroma, at: frame.timestamp, into: &faces)
        let scores = detector.lastScores
        let detections = faces.enumerated().map { index, box in DetectedFace(box: box, score: index < scores.count ? scores[index] : nil) }
        let landmarked = detector.lastLandmarks
        let t1 = monotonicSeconds()
        if output.takeReconnected() {
            turret.rebooted(at: frame.timestamp)
            tracker.deviceRebooted()
        }
        var (target, intent) = tracker.update(
            faces: faces, frameWidth: frame.image.width, frameHeight: frame.image.height, turret: &turret.model, at: frame.timestamp,
            passedOver: householdInView())
        let followed = expressions.read(landmarked, in: frame.image, target: target, at: frame.timestamp)
        lastFollowed = followed
        switch steering {
        case .tracking: break
        case .manual(let aim): intent = .aim(aim)
        case .manualScan: intent = .scan
        }
        let wireTime = settings.turretClock.time(wall: monotonicSeconds(), frame: frame)
        // The frame's moment on the wire, on the frames' clock: how far a walker has gone since the picture.
        let wireNow = frame.timestamp + (frame.capturedAt.map { min(max(wireTime - $0, 0), 1) } ?? 0)
        let leading = fire != nil && steering == .tracking && settings.tracking.mount == .fixed
        if leading {
            lead.observe(target.map { sighting(of: $0, in: frame) }, of: tracker.targetID)
            if lock.isLocked, let aim = leadAim(wireNow: wireNow, wireTime: wireTime, at: frame.timestamp) { intent = .aim(aim) } else if !lock.isLocked { lead.drop() }
        } else if fire == nil, settings.leadsUnarmed, steering == .tracking, settings.tracking.mount == .fixed, wireNow > frame.timestamp, case .aim = intent,
            let target
        {
            // Only a frame whose age is known (a camera's, the range's) is led: a file's frames have none, and keep SPEC §2's aim.
            let point = settings.tracking.aimPoint(of: target, frameHeight: frame.image.height)
            let exact = settings.tracking.mapper.unroundedAngles(at: point, frameWidth: frame.image.width, frameHeight: frame.image.height)
            latencyLead.observe(pan: exact.pan, tilt: exact.tilt, of: tracker.targetID, at: frame.timestamp)
            if let aim = latencyLead.aim(latency: wireNow - frame.timestamp, mapper: settings.tracking.mapper, slack: settings.tracking.hysteresis) {
                intent = .aim(aim)
            }
        } else {
            latencyLead.forget()
        }
        var commands: [Command]
        switch intent {
        case .aim(let aim): commands = turret.write(aim, at: frame.timestamp)
        case .scan: commands = turret.write(nil, at: frame.timestamp)
        case .hold: commands = []
        }
        let lockEvent = lock.update(targetID: tracker.targetID, box: target, at: frame.timestamp)
        let person = tracker.targetID.flatMap { identities?.person(of: $0) }
        var heldFire: HeldFire?
        if fire != nil, steering == .tracking {
            fire?.sent(commands, wireTime: wireTime)
            heldFire = target.flatMap { fireHold(at: $0, among: faces, frameHeight: frame.image.height) }
            if let plan = lead.plan, heldFire == nil, !isClear(plan.aim, of: faces, in: frame) { heldFire = .firePointOnFace }
            if heldFire == nil, let spared = settings.sparedPeople { heldFire = Self.hold(person, sparing: spared) }
            if spared == nil, heldFire == nil, let shot = shot(locked: lock.isLocked, wireNow: wireNow, wireTime: wireTime, frame: frame) {
                commands.append(shot)
                turret.fire(shot, at: frame.timestamp)
            }
        }
        lastFrameTime = frame.timestamp
        let events = eventFinder.events(
            at: frame.timestamp, faces: faces, target: target, lockEvent: lockEvent, commands: commands, followed: followed,
            lostAfter: settings.tracking.lostAfter)
        let t2 = monotonicSeconds()
        try output.send(commands)
        let t3 = monotonicSeconds()
        let sentAt = settings.turretClock.time(wall: t3, frame: frame)
        if commands.contains(where: { $0.axis == .trigger }) { fire?.written(at: sentAt) }
        return FrameResult(
            index: frame.index, timestamp: frame.timestamp, detections: detections, followedFace: followed, target: target, intent: intent,
            commands: commands, isLocked: lock.isLocked, lockEvent: lockEvent, events: events, targetID: tracker.targetID, tracks: tracker.faces,
            person: person, spared: spared,
            heldFire: lock.isLocked ? heldFire : nil, commanded: commanded, leadAim: lead.plan?.aim,
            sentAt: sentAt, detectSeconds: t1 - t0, selectAndMapSeconds: t2 - t1, writeSeconds: t3 - t2)
    }

    /// The shot this frame, if one goes: at a walking target when the plan's
    /// moment has come, at a standing one when the aim is on it (never at a
    /// walker's present place, nor in a walker's pause: the dart would arrive
    /// where they were; `LeadingFire.isStanding`).
    private func shot(locked: Bool, wireNow: Double, wireTime: Double, frame: Frame) -> Command? {
        guard locked, fire != nil else { return nil }
        if lead.plan != nil {
            // Frames come this far apart: the moment is taken on the frame nearest it.
            let interval = min(max(frame.timestamp - lastFrameTime, 0), 0.2)
            guard lead.isTimeToFire(wireNow: wireNow, frameInterval: interval, lead: settings.lead),
                let shot = fire?.acceptedShot(turret: turret.model, at: frame.timestamp, wireTime: wireTime)
            else { return nil }
            lead.fired(at: wireNow)
            return shot
        }
        guard lead.isStanding(wireNow: wireNow, time: frame.timestamp, lead: settings.lead) else { return nil }
        return fire?.shot(locked: locked, aimError: tracker.aimError, turret: turret.model, at: frame.timestamp, wireTime: wireTime)
    }

    /// The aim of the lead's plan this frame, if it has one. `wireTime` is on
    /// the turret's clock, as the fire control's last shot is: the cooldown left is read there.
    private func leadAim(wireNow: Double, wireTime: Double, at time: Double) -> Aim? {
        var model = turret.model
        model.advance(to: time)
        return lead.aim(
            wireNow: wireNow, turret: model, servoSecondsPer60Degrees: settings.tracking.servoSecondsPer60Degrees,
            mapper: settings.tracking.mapper, lead: settings.lead, cooldownLeft: fire?.cooldownLeft(at: wireTime) ?? 0)
    }

    /// The target's fire point and face size in the wire's degrees.
    private func sighting(of box: Box, in frame: Frame) -> LeadingFire.Sighting {
        let mapper = settings.tracking.mapper
        let (width, height) = (frame.image.width, frame.image.height)
        let point = settings.tracking.aimPoint(of: box, frameHeight: height, below: settings.firePointBelow)
        let (pan, tilt) = mapper.unroundedWireAngles(at: point, frameWidth: width, frameHeight: height)
        return LeadingFire.Sighting(pan: pan, tilt: tilt, faceDegrees: Double(box.width) * mapper.degreesPerPixel(frameWidth: width), time: frame.timestamp)
    }

    /// True when `aim`'s point in the frame lies off every face (grown by the margin).
    private func isClear(_ aim: Aim, of faces: [Box], in frame: Frame) -> Bool {
        let point = settings.tracking.mapper.framePoint(of: aim, width: frame.image.width, height: frame.image.height, tiltEnabled: settings.tiltEnabled)
        return FirePoint.isClear(point, of: faces)
    }

    /// `--target unknown`: the faces followed so far that are recognised as the household.
    private func householdInView() -> Set<Int> {
        guard settings.targetsStrangers, let identities else { return [] }
        return Set(tracker.faces.lazy.filter { identities.person(of: $0.id)?.name != nil }.map(\.id))
    }

    /// `--spare known` or `--spare NAME`: why fire is held at a target recognised as `person`, if it is:
    /// the one spared, or one not read yet (a new target's first frames, a face too small for the mesh).
    private static func hold(_ person: PersonMatch?, sparing spared: SparedPeople) -> HeldFire? {
        guard let person else { return .unrecognised }
        guard spared.spares(person) else { return nil }
        return spared == .household ? .household : .sparedByName
    }

    /// Why no shot may be taken at `target` now, if none may (SPEC §8: never
    /// at a face): the fire point, clamped into the frame, on any face found,
    /// or no tilt to aim it (unless the blaster is pan-only below head height).
    private func fireHold(at target: Box, among faces: [Box], frameHeight: Int) -> HeldFire? {
        guard settings.tiltEnabled else { return settings.panOnlyBelowHeads ? nil : .noTilt }
        let point = settings.tracking.aimPoint(of: target, frameHeight: frameHeight, below: settings.firePointBelow)
        return FirePoint.isClear(point, of: faces) ? nil : .firePointOnFace
    }

    /// Applies a change to the run between frames; `width` x `height` is the
    /// size of the frame about to be processed (a pointed aim is in its pixels).
    public func apply(_ change: RunChange, frameWidth width: Int, frameHeight height: Int) {
        switch change {
        case .settings(let new): self.change(settings: new)
        case .detector(let handOff): self.change(detector: handOff.detector, name: handOff.name)
        case .steer(let request): steer(request, frameWidth: width, frameHeight: height)
        }
    }

    /// Takes new settings between frames (the web console): the faces, the
    /// target, the lock and what was sent are kept.
    private func change(settings new: PipelineSettings) {
        var new = new
        new.turretClock = settings.turretClock
        settings = new
        tracker.change(settings: new.tracking)
        turret.change(deadband: new.deadband, tiltEnabled: new.tiltEnabled)
        turret.secondsPer60Degrees = new.tracking.servoSecondsPer60Degrees
        lock.lockAfter = new.lockAfter
        if let fireSettings = new.fire { fire?.settings = fireSettings }
        wire.change(trim: new.trim)
    }

    /// Runs faces through `detector` from the next frame on.
    private func change(detector new: any FaceDetector, name: String) {
        detector = new
        detectorName = name
    }

    /// Applies a person's request in a frame of `width` x `height`.
    private func steer(_ request: SteeringRequest, frameWidth width: Int, frameHeight height: Int) {
        let held = commanded
        let range = settings.tracking.mapper.range
        func clamp(_ angle: Int) -> Int { min(max(angle, range.lowerBound), range.upperBound) }
        switch request {
        case .point(let x, let y):
            steering = .manual(tracker.aim(atFramePoint: (x, y), width: width, height: height, turret: &turret.model, at: lastFrameTime))
        case .nudge(let pan, let tilt):
            var from = held
            if case .manual(let aim) = steering { from = aim }
            steering = .manual(Aim(pan: clamp(from.pan + pan), tilt: clamp(from.tilt + tilt)))
        case .scan: steering = .manualScan
        case .center: steering = .manual(Aim(pan: 90, tilt: 90))
        case .auto: steering = .tracking
        }
    }

    /// The angles the turret has been told to hold (the firmware's own
    /// state, as the host models it).
    public var commanded: Aim { turret.commanded }

    /// The camera went away: sweep until it is back. Returns the loss of
    /// the lock, if there was one.
    public func cameraLost() throws(LinkError) -> LockOn.Event? {
        tracker.forgetFaces()
        expressions.forget()
        eventFinder.forgetExpressions()
        lastFollowed = nil
        try output.send(turret.write(nil, at: lastFrameTime))
        return lock.update(targetID: nil, box: nil, at: lastFrameTime)
    }

    /// Sends the parting command (`--on-exit`: hold still, `L`, centre, or
    /// nothing) unless it would repeat the last command on its axis, and flushes.
    public func finish(with exitCommand: ExitCommand, timeout: Double = 1) throws(LinkError) {
        try output.send(exitCommand.commands(for: &turret, at: lastFrameTime))
        try output.flush(timeout: timeout)
    }
}
