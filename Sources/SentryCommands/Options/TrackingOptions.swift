import ArgumentParser
import Geometry
import SentryApp
import Tracking
import Turret
import TurretProtocol

/// How faces become aims: the mapping, the mount and its loop, smoothing,
/// hysteresis, the sticky target and the search (`run`, and the console's
/// live settings).
struct TrackingOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Degrees kept clear of each mechanical end: frame edges map to OFFSET and 180-OFFSET.")
    var offset: Int = 40

    @Flag(inversion: .prefixedNo, help: "Mirror pan (camera facing the other way).")
    var invertX = false

    @Flag(inversion: .prefixedNo, help: "Mirror tilt.")
    var invertY = false

    @Flag(inversion: .prefixedNo, help: "Also drive a tilt servo with Y<deg>. (the original sketch knows only X and L).")
    var tilt = false

    @Option(parsing: .unconditional, help: "Ignore aim changes of at most this many degrees.")
    var deadband: Int = 0

    @Option(parsing: .unconditional, help: "Seconds a target may be out of sight before it is given up (then --search, or another face).")
    var lostAfter: Double = 0

    @Option(help: "Where the camera is: fixed (beside the turret: the frame maps to angles) or turret (on the pan/tilt head: a closed loop).")
    var mount: Mount = .fixed

    @Option(
        parsing: .unconditional, help: "The camera's horizontal field of view in degrees (--mount turret; the vertical one follows from the frame's aspect).")
    var fov: Double = 60

    @Option(parsing: .unconditional, help: "Turret loop: proportional gain (share of the error corrected per frame).")
    var kp: Double = TurretLoop.Gains.standard.proportional

    @Option(parsing: .unconditional, help: "Turret loop: integral gain (per second; removes the lag behind a face that keeps moving).")
    var ki: Double = TurretLoop.Gains.standard.integral

    @Option(parsing: .unconditional, help: "Turret loop: derivative gain (seconds).")
    var kd: Double = TurretLoop.Gains.standard.derivative

    @Flag(inversion: .prefixedNo, help: "Smooth the target's centre (One Euro filter): a still face stops jittering the servo.")
    var smooth = false

    @Option(parsing: .unconditional, help: "Smoothing: cutoff in Hz for a still face (lower: steadier, more lag).")
    var smoothCutoff: Double = OneEuroFilter.Parameters.standard.minCutoff

    @Option(parsing: .unconditional, help: "Smoothing: how fast the cutoff rises with speed (higher: less lag when moving).")
    var smoothBeta: Double = OneEuroFilter.Parameters.standard.beta

    @Option(
        parsing: .unconditional,
        help:
            "Degrees the exact angle must pass the edge of the degree sent before the next is sent: a still face never flips the servo between two degrees (0: the exact formula every frame)."
    )
    var hysteresis: Double = SteadyDegree.standardSlack

    @Option(parsing: .unconditional, help: "Another face takes over the target only when its area is larger by this share (0.2 = 20%)...")
    var switchMargin: Double = 0.2

    @Option(parsing: .unconditional, help: "...for this many frames in a row.")
    var switchFrames: Int = 3

    @Option(help: "Once the target is gone: scan (L: sweep), hold (stay), or last-seen (aim at the edge it left by, sweep after --lost-after).")
    var search: SearchPolicy = .scan

    @Option(parsing: .unconditional, help: "The servos' speed in seconds per 60° (the simulated servo's, and the turret loop's model); 0 for instant.")
    var servoSpeed: Double = ServoMotion.typicalSecondsPer60Degrees

    func validate() throws {
        guard AngleMapper.offsetRange.contains(offset) else {
            throw ValidationError("--offset \(offset) must be between 0 and 89 (the default 40 maps the frame to 40–140°)")
        }
        guard (0...180).contains(deadband) else { throw ValidationError("--deadband \(deadband) must be between 0 and 180 degrees") }
        try checkRange(lostAfter, "lost-after", 0...3600, " seconds")
        try checkRange(fov, "fov", 1...179, " degrees (a typical webcam sees 60)")
        try checkRange(kp, "kp", 0.01...2, " (default \(TurretLoop.Gains.standard.proportional))")
        try checkRange(ki, "ki", 0...10, " per second (default \(TurretLoop.Gains.standard.integral))")
        try checkRange(kd, "kd", 0...1, " seconds (default \(TurretLoop.Gains.standard.derivative))")
        try checkRange(smoothCutoff, "smooth-cutoff", 0.01...100, " Hz")
        try checkRange(smoothBeta, "smooth-beta", 0...100, "")
        try checkRange(hysteresis, "hysteresis", 0...5, " degrees (default \(SteadyDegree.standardSlack))")
        try checkRange(switchMargin, "switch-margin", 0...100, " (0.2: another face must be 20% larger)")
        try checkRange(servoSpeed, "servo-speed", 0...10, " seconds per 60° (0.1 is typical)")
        guard (1...10_000).contains(switchFrames) else { throw ValidationError("--switch-frames \(switchFrames) must be between 1 and 10000") }
        if search == .lastSeen, lostAfter <= 0 {
            throw ValidationError("--search last-seen needs --lost-after above 0: how long to watch the edge before sweeping, e.g. --lost-after 2")
        }
    }

    var settings: TrackingSettings {
        var settings = TrackingSettings(mapper: AngleMapper(offset: offset, invertX: invertX, invertY: invertY), tiltEnabled: tilt)
        settings.mount = mount
        settings.fieldOfView = fov
        settings.gains = TurretLoop.Gains(proportional: kp, integral: ki, derivative: kd)
        settings.smoothing = smooth ? OneEuroFilter.Parameters(minCutoff: smoothCutoff, beta: smoothBeta) : nil
        settings.hysteresis = hysteresis
        settings.switchMargin = switchMargin
        settings.switchFrames = switchFrames
        settings.lostAfter = lostAfter
        settings.search = search
        settings.servoSecondsPer60Degrees = servoSpeed
        return settings
    }
}
