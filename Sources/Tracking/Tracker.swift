import Geometry
import Turret
import TurretProtocol

/// Where the camera is (`--mount`).
public enum Mount: String, CaseIterable, Sendable {
    /// Beside the turret, still: SPEC §2's offset-range mapping.
    case fixed
    /// On the pan/tilt head: the closed loop of `TurretLoop`.
    case turret
}

/// What to do once the target is gone (`--search`).
public enum SearchPolicy: String, CaseIterable, Sendable {
    /// `L`: the firmware sweeps (the original behaviour).
    case scan
    /// Stay where the turret points.
    case hold
    /// Aim at the edge the face went out of; sweep once `--lost-after` passes.
    case lastSeen = "last-seen"
}

/// Everything that shapes how faces become aims.
public struct TrackingSettings: Sendable {
    public var mapper: AngleMapper
    public var tiltEnabled: Bool
    public var mount: Mount = .fixed
    /// Horizontal field of view in degrees (`--mount turret`).
    public var fieldOfView: Double = 60
    public var gains: TurretLoop.Gains = .standard
    /// The One Euro filter on the target's centre, or `nil` for none.
    public var smoothing: OneEuroFilter.Parameters?
    /// Degrees the exact angle must go past the edge of the whole degree
    /// sent before another is sent (`--hysteresis`): detector noise on a
    /// still face, where its angle sits on the boundary between two
    /// degrees, would otherwise flip the servo between them every frame and
    /// never let an aim stand long enough to fire. 0: SPEC §2's formula as is.
    public var hysteresis: Double = SteadyDegree.standardSlack
    public var switchMargin: Double = 0.2
    public var switchFrames: Int = 3
    /// Seconds a target may be out of sight before it is given up.
    public var lostAfter: Double = 0
    public var search: SearchPolicy = .scan
    /// The servos' speed, for the turret loop's model of them.
    public var servoSecondsPer60Degrees = ServoMotion.typicalSecondsPer60Degrees
    /// Face heights below the face's centre the turret aims at (`--fire-below`
    /// when armed: the fire point off the face, SPEC §8's safety); 0 (unarmed):
    /// SPEC §2's centre.
    public var aimBelow: Double = 0

    public init(mapper: AngleMapper = AngleMapper(), tiltEnabled: Bool = false) {
        self.mapper = mapper
        self.tiltEnabled = tiltEnabled
    }

    /// Where in the picture the turret aims for a face in `box`: `below` face heights under
    /// its centre (`aimBelow` unless given), kept inside the frame.
    public func aimPoint(of box: Box, frameHeight: Int, below: Double? = nil) -> (x: Double, y: Double) {
        let center = box.center
        return (center.x, min(center.y + (below ?? aimBelow) * Double(box.height), Double(max(frameHeight - 1, 0))))
    }
}

/// What the turret should do after a frame.
public enum Intent: Hashable, Sendable {
    /// Point here.
    case aim(Aim)
    /// Send nothing: stay.
    case hold
    /// Sweep (`L`).
    case scan
}

/// Faces of each frame in, an intent out: identities (`FaceTracks`), the
/// sticky target (`StickyTarget`), smoothing, the mount's geometry
/// (`AngleMapper` or `TurretLoop`) and the search once the target is gone.
/// Pure: frame times are passed in.
///
/// Where the turret points it reads from the host's `TurretModel`, which the
/// caller owns (in its `TurretState`) and passes in: the protocol never says
/// where the turret points, and the turret loop and the aim error need to know.
public struct Tracker: Sendable {
    public private(set) var settings: TrackingSettings
    /// The target's identity (`FaceTracks`), visible or held out of sight.
    public private(set) var targetID: Int?
    /// How far the turret points from the target seen this frame, in
    /// degrees (tilt 0 without `--tilt`); `nil` with no target in sight.
    public private(set) var aimError: (pan: Double, tilt: Double)?
    private var tracks: FaceTracks

    /// Every face followed, in sight or held out of it a moment, each with its identity.
    public var faces: [TrackedFace] { tracks.faces }
    private var sticky: StickyTarget
    private var loop: TurretLoop?
    private var smoothX: OneEuroFilter
    private var smoothY: OneEuroFilter
    private var steadyPan = SteadyDegree()
    private var steadyTilt = SteadyDegree()
    /// Where to look while the target is out of sight (`last-seen`).
    private var exitAim: Aim?

    public init(settings: TrackingSettings) {
        self.settings = settings
        tracks = FaceTracks(forgetAfter: max(settings.lostAfter, 0.5))
        sticky = StickyTarget(switchMargin: settings.switchMargin, switchFrames: settings.switchFrames, lostAfter: settings.lostAfter)
        if settings.mount == .turret { loop = Self.turretLoop(settings) }
        smoothX = OneEuroFilter(settings.smoothing ?? .standard)
        smoothY = OneEuroFilter(settings.smoothing ?? .standard)
        steadyPan.slack = settings.hysteresis
        steadyTilt.slack = settings.hysteresis
    }

    /// The target this frame (its box, if in sight) and what to do, with the
    /// turret's model advanced to `time` where its pose is needed. Faces
    /// `passedOver` (by id) are the target only when no other is in view.
    public mutating func update(
        faces: [Box], frameWidth width: Int, frameHeight height: Int, turret: inout TurretModel, at time: Double, passedOver: Set<Int> = []
    ) -> (target: Box?, intent: Intent) {
        let target = sticky.choose(among: tracks.update(with: faces, at: time), at: time, passedOver: passedOver)
        if target?.id != targetID {
            targetID = target?.id
            restartFollowing()
        }
        aimError = target.flatMap {
            $0.isVisible ? error(toward: settings.aimPoint(of: $0.box, frameHeight: height), width: width, height: height, turret: &turret, at: time) : nil
        }
        guard let target else {
            return (nil, settings.search == .hold ? .hold : .scan)
        }
        guard target.isVisible else {
            guard settings.search == .lastSeen else { return (nil, .hold) }
            if exitAim == nil { exitAim = edgeAim(leaving: target.box, width: width, height: height, turret: &turret, at: target.lastSeen) }
            return (nil, exitAim.map(Intent.aim) ?? .hold)
        }
        exitAim = nil
        return (target.box, .aim(aim(at: settings.aimPoint(of: target.box, frameHeight: height), width: width, height: height, turret: &turret, at: time)))
    }

    /// New settings while running (the web console): the faces and the target
    /// are kept; the loop and the smoothing restart
    /// when their settings changed.
    public mutating func change(settings new: TrackingSettings) {
        let old = settings
        settings = new
        tracks.forgetAfter = max(new.lostAfter, 0.5)
        sticky.switchMargin = new.switchMargin
        sticky.switchFrames = new.switchFrames
        sticky.lostAfter = new.lostAfter
        if new.mount != old.mount || new.fieldOfView != old.fieldOfView || new.gains != old.gains || new.mapper != old.mapper {
            loop = new.mount == .turret ? Self.turretLoop(new) : nil
        }
        steadyPan.slack = new.hysteresis
        steadyTilt.slack = new.hysteresis
        if new.smoothing != old.smoothing || new.mapper != old.mapper || new.mount != old.mount {
            smoothX = OneEuroFilter(new.smoothing ?? .standard)
            smoothY = OneEuroFilter(new.smoothing ?? .standard)
            steadyPan.reset()
            steadyTilt.reset()
        }
        exitAim = nil
    }

    private static func turretLoop(_ settings: TrackingSettings) -> TurretLoop {
        TurretLoop(
            fieldOfView: settings.fieldOfView, gains: settings.gains, limits: settings.mapper.range,
            invertX: settings.mapper.invertX, invertY: settings.mapper.invertY)
    }

    /// The aim that points at `point` of the frame: SPEC §2's mapping on a
    /// fixed mount; on a turret, the pose plus the point's offset from the
    /// middle of the picture, within the mapper's range.
    public mutating func aim(
        atFramePoint point: (x: Double, y: Double), width: Int, height: Int, turret: inout TurretModel, at time: Double
    ) -> Aim {
        let mapper = settings.mapper
        guard let loop else { return mapper.aim(at: point, frameWidth: width, frameHeight: height) }
        let pose = Self.pose(of: &turret, at: time)
        let offset = loop.offset(of: point, width: width, height: height)
        let range = mapper.range
        func clamp(_ angle: Double) -> Int { min(max(Int(angle.rounded()), range.lowerBound), range.upperBound) }
        return Aim(pan: clamp(pose.pan + offset.pan), tilt: clamp(pose.tilt + offset.tilt))
    }

    /// The board came back after a disconnect: it rebooted, centred, so
    /// following starts over from where it points now.
    public mutating func deviceRebooted() {
        restartFollowing()
    }

    /// Where the turret points at `time`.
    private static func pose(of turret: inout TurretModel, at time: Double) -> (pan: Double, tilt: Double) {
        turret.advance(to: time)
        return (turret.pan, turret.tilt)
    }

    /// The turret's angle from `point` (the target's centre): what the
    /// camera shows on a turret, the mapped angle less the pose when fixed.
    private mutating func error(
        toward point: (x: Double, y: Double), width: Int, height: Int, turret: inout TurretModel, at time: Double
    ) -> (pan: Double, tilt: Double) {
        var error: (pan: Double, tilt: Double)
        if let loop {
            error = loop.offset(of: point, width: width, height: height)
        } else {
            let pose = Self.pose(of: &turret, at: time)
            let (pan, tilt) = settings.mapper.unroundedWireAngles(at: point, frameWidth: width, frameHeight: height)
            error = (pan - pose.pan, tilt - pose.tilt)
        }
        if !settings.tiltEnabled { error.tilt = 0 }
        return error
    }

    /// The camera went away: every face is forgotten.
    public mutating func forgetFaces() {
        tracks.removeAll()
        sticky.reset()
        targetID = nil
        restartFollowing()
    }

    private mutating func restartFollowing() {
        smoothX.reset()
        smoothY.reset()
        steadyPan.reset()
        steadyTilt.reset()
        loop?.restart()
        exitAim = nil
    }

    private mutating func aim(at point: (x: Double, y: Double), width: Int, height: Int, turret: inout TurretModel, at time: Double) -> Aim {
        let mapper = settings.mapper
        guard var loop else {
            // SPEC §2's truncation, held at the degree sent until the exact angle clearly leaves it.
            var (x, y) = point
            if settings.smoothing != nil { (x, y) = (smoothX.filter(x, at: time), smoothY.filter(y, at: time)) }
            let exact = mapper.unroundedAngles(at: (x, y), frameWidth: width, frameHeight: height)
            let pan = steadyPan.degree(for: exact.pan, rounding: .towardZero)
            // Armed, the tilt aims the fire point below a face: its whole degree is the one
            // below the point, never the one above, toward the face (SPEC §2's truncation
            // would round a point above the turret's level up, by up to a degree: 5 cm at 3 m).
            let tilt = steadyTilt.degree(for: exact.tilt, rounding: settings.aimBelow > 0 ? .up : .towardZero)
            return Aim(pan: mapper.invertX ? 180 - pan : pan, tilt: mapper.invertY ? 180 - tilt : tilt)
        }
        defer { self.loop = loop }
        var error = loop.offset(of: point, width: width, height: height)
        if settings.smoothing != nil {
            // Smooth where the face is in the room (pose + offset), not in
            // the moving picture; in pixel units so the parameters mean the
            // same for both mounts.
            let pose = Self.pose(of: &turret, at: time)
            let pixelsPerDegree = Double(width) / settings.fieldOfView
            error.pan = smoothX.filter((pose.pan + error.pan) * pixelsPerDegree, at: time) / pixelsPerDegree - pose.pan
            error.tilt = smoothY.filter((pose.tilt + error.tilt) * pixelsPerDegree, at: time) / pixelsPerDegree - pose.tilt
        }
        let unrounded = loop.aim(correcting: error, from: Self.pose(of: &turret, at: time), at: time)
        return Aim(
            pan: steadyPan.degree(for: unrounded.pan, rounding: .toNearestOrAwayFromZero),
            tilt: steadyTilt.degree(for: unrounded.tilt, rounding: .toNearestOrAwayFromZero))
    }

    /// The aim at the frame edge nearest to where `box` was last seen.
    private mutating func edgeAim(leaving box: Box, width: Int, height: Int, turret: inout TurretModel, at time: Double) -> Aim {
        let center = box.center
        return aim(
            atFramePoint: (x: center.x < Double(width) / 2 ? 0 : Double(width), y: center.y), width: width, height: height, turret: &turret,
            at: time)
    }
}
