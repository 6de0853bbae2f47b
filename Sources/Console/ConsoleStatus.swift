import FoundationEssentials
import Geometry
import RunControl

/// A face as the console shows it: its box in frame pixels and, for
/// BlazeFace, its score.
public struct FaceBox: Codable, Sendable, Equatable {
    public var x: Int
    public var y: Int
    public var w: Int
    public var h: Int
    public var score: Float?

    public init(_ box: Box, score: Float? = nil) {
        x = box.x
        y = box.y
        w = box.width
        h = box.height
        self.score = score
    }
}

/// Pan and tilt in degrees.
public struct Angles: Codable, Sendable, Equatable {
    public var pan: Int
    public var tilt: Int

    public init(_ aim: Aim) {
        pan = aim.pan
        tilt = aim.tilt
    }
}

/// Where a dart landed on the range, in frame pixels.
public struct DartStatus: Codable, Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var hit: Bool

    public init(x: Double, y: Double, hit: Bool) {
        self.x = x
        self.y = y
        self.hit = hit
    }
}

/// What sentry did with one frame: the page draws its overlay from this,
/// matched to the video by `frame`.
public struct FrameStatus: Codable, Sendable, Equatable {
    public var frame: Int
    /// Seconds since the source started.
    public var time: Double
    public var width: Int
    public var height: Int
    public var faces: [FaceBox]
    /// The index in `faces` of the target, when it is in sight.
    public var target: Int?
    /// The aim this frame asked for, if any.
    public var aim: Angles?
    /// Where the turret is told to be once this frame's commands arrive.
    public var commanded: Angles
    /// Where that is in the picture, `[x, y]` in frame pixels: the middle on a
    /// turret mount, SPEC §2's mapping undone on a fixed one (so the page
    /// never computes the formula again).
    public var aimPoint: [Double]?
    /// Where the turret fires at the target, `[x, y]` in frame pixels (`--fire-below` face heights
    /// under its centre), shown whether armed or not; nil without a target in sight.
    public var firePoint: [Double]?
    /// Armed at a walker: where the turret waits for the shot (the lead's
    /// intercept), `[x, y]` in frame pixels; nil while no shot is planned.
    public var leadPoint: [Double]?
    /// On the shooting range with the simulated servo: where the last darts
    /// landed (`hit`: on a torso), for a couple of seconds each.
    public var darts: [DartStatus]?
    /// `--fire` was given: the fire point is live.
    public var armed = false
    /// Armed and locked: why no shot is taken now (`fire point on a face`), for the banner.
    public var heldFire: String?
    /// With `--known`: who the target is (a name, or `stranger`), once read.
    public var person: String?
    /// The commands this frame put on the wire.
    public var commands: [String]
    /// The HUD line: `Sentry mode — no targets`, `Tracking — X: 93 | Y: 71`…
    public var mode: String
    /// `auto` (face tracking), `manual` or `manual-scan`.
    public var steering: String
    public var locked: Bool
    public var fps: Double
    public var detectMs: Double
    /// The frame loop's own time for this frame (detect, track, write, publish).
    public var loopMs: Double
    public var serial: String
    public var detector: String
    /// The followed face read as points (`--expressions`); nil without them or without a face.
    public var face: FaceReadingStatus?
    /// `/api/status` only: the live settings and the stream's figures.
    public var settings: [String: SettingValue]?
    public var stream: StreamFigures?

    public init(
        frame: Int, time: Double, width: Int, height: Int, faces: [FaceBox], target: Int?, aim: Angles?,
        commanded: Angles, commands: [String], mode: String, steering: String, locked: Bool, fps: Double,
        detectMs: Double, loopMs: Double, serial: String, detector: String
    ) {
        self.frame = frame
        self.time = time
        self.width = width
        self.height = height
        self.faces = faces
        self.target = target
        self.aim = aim
        self.commanded = commanded
        self.commands = commands
        self.mode = mode
        self.steering = steering
        self.locked = locked
        self.fps = fps
        self.detectMs = detectMs
        self.loopMs = loopMs
        self.serial = serial
        self.detector = detector
    }
}

/// The followed face as the console draws it (`--expressions`): the mesh, the
/// eyes and irises, the pose axes, the six scores and the states (SPEC §8's units).
public struct FaceReadingStatus: Codable, Sendable, Equatable {
    /// The 478 points' x and y in frame pixels, one after the other (x0, y0, x1, y1…),
    /// to a tenth of a pixel: the page draws from them, and pairs keep the JSON short.
    public var points: [Float]
    /// ARKit's names to 0...1, to two decimals.
    public var expressions: [String: Float]
    public var states: [String]
    /// `yaw`, `pitch`, `roll` in degrees.
    public var pose: [String: Float]
    /// `left` and `right`: the iris centre against the eye corners, -1...1 per axis.
    public var gaze: [String: [Float]]
    /// The face is the tracker's target.
    public var target: Bool

    public init(
        points: [Float], expressions: [String: Float], states: [String], pose: [String: Float], gaze: [String: [Float]], target: Bool
    ) {
        (self.points, self.expressions, self.states) = (points, expressions, states)
        (self.pose, self.gaze, self.target) = (pose, gaze, target)
    }
}

/// A line of the console's event log.
public struct ConsoleEvent: Codable, Sendable, Equatable {
    public var sequence: Int
    /// Seconds since the source started (the frame clock).
    public var time: Double
    /// `face`, `lock`, `fire`, `expression`, `serial`, `camera`, `settings`, `steering`.
    public var kind: String
    public var text: String
}

/// How the video stream is doing.
public struct StreamFigures: Codable, Sendable, Equatable {
    public var viewers: Int
    public var framesEncoded: Int
    /// Median JPEG encode time, ms.
    public var encodeMs: Double
    /// Capture (the frame read from the source) to the JPEG written to a
    /// viewer's socket, ms: median and 99th percentile.
    public var latencyMs: Double
    public var latencyP99Ms: Double
    public var jpegBytes: Int
}

/// The events a new frame's status implies against the last one: the
/// target found or lost, locks, shots, expressions begun and ended, serial
/// state, who steers.
public enum EventDerivation {
    public static func events(from previous: FrameStatus?, to current: FrameStatus) -> [(kind: String, text: String)] {
        var events: [(String, String)] = []
        let hadTarget = previous?.target != nil
        if let index = current.target, !hadTarget {
            let face = current.faces[index]
            events.append(("face", "face found at (\(face.x + face.w / 2), \(face.y + face.h / 2))"))
        } else if current.target == nil, hadTarget {
            events.append(("face", "face lost"))
        }
        if current.locked != (previous?.locked ?? false) {
            events.append(("lock", current.locked ? "target locked" : "lock lost"))
        }
        for command in current.commands where command.hasPrefix("F") {
            events.append(("fire", "fire: sent \(command)"))
        }
        let shown = current.face?.states ?? [], wasShown = previous?.face?.states ?? []
        for state in shown where !wasShown.contains(state) { events.append(("expression", "\(state) began")) }
        for state in wasShown where !shown.contains(state) { events.append(("expression", "\(state) ended")) }
        if let previous, previous.serial != current.serial {
            events.append(("serial", "serial: \(current.serial)"))
        }
        if current.steering != (previous?.steering ?? "auto") {
            let said = ["auto": "face tracking steers again", "manual": "manual: aiming by hand", "manual-scan": "manual: sweeping"]
            events.append(("steering", said[current.steering] ?? current.steering))
        }
        return events
    }
}

/// Median and 99th percentile of recent samples, kept in a fixed ring.
struct RecentSamples: Sendable {
    private var values: [Double]
    private var next = 0
    private var filled = 0

    init(capacity: Int) { values = [Double](repeating: 0, count: capacity) }

    mutating func add(_ value: Double) {
        values[next] = value
        next = (next + 1) % values.count
        filled = min(filled + 1, values.count)
    }

    func percentile(_ p: Double) -> Double {
        guard filled > 0 else { return 0 }
        let sorted = values[0..<filled].sorted()
        return sorted[min(filled - 1, Int((Double(filled - 1) * p).rounded()))]
    }
}
