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
    @Option(parsing: .unconditional, help: LiveSetting.offset.flagHelp)
    var offset: Int = 40

    @Flag(inversion: .prefixedNo, help: LiveSetting.invertX.flagHelp)
    var invertX = false

    @Flag(inversion: .prefixedNo, help: LiveSetting.invertY.flagHelp)
    var invertY = false

    @Option(parsing: .unconditional, help: LiveSetting.trimX.flagHelp)
    var trimX: Int = 0

    @Option(parsing: .unconditional, help: LiveSetting.trimY.flagHelp)
    var trimY: Int = 0

    @Flag(inversion: .prefixedNo, help: LiveSetting.tilt.flagHelp)
    var tilt = false

    @Option(parsing: .unconditional, help: LiveSetting.deadband.flagHelp)
    var deadband: Int = 0

    @Option(parsing: .unconditional, help: LiveSetting.lostAfter.flagHelp)
    var lostAfter: Double = 0

    @Option(help: LiveSetting.mount.flagHelp)
    var mount: Mount = .fixed

    @Option(parsing: .unconditional, help: LiveSetting.fov.flagHelp)
    var fov: Double?

    @Option(parsing: .unconditional, help: LiveSetting.kp.flagHelp)
    var kp: Double = TurretLoop.Gains.standard.proportional

    @Option(parsing: .unconditional, help: LiveSetting.ki.flagHelp)
    var ki: Double = TurretLoop.Gains.standard.integral

    @Option(parsing: .unconditional, help: LiveSetting.kd.flagHelp)
    var kd: Double = TurretLoop.Gains.standard.derivative

    @Flag(inversion: .prefixedNo, help: LiveSetting.smooth.flagHelp)
    var smooth = false

    @Option(parsing: .unconditional, help: LiveSetting.smoothCutoff.flagHelp)
    var smoothCutoff: Double = OneEuroFilter.Parameters.standard.minCutoff

    @Option(parsing: .unconditional, help: LiveSetting.smoothBeta.flagHelp)
    var smoothBeta: Double = OneEuroFilter.Parameters.standard.beta

    @Option(parsing: .unconditional, help: LiveSetting.hysteresis.flagHelp)
    var hysteresis: Double = SteadyDegree.standardSlack

    @Option(parsing: .unconditional, help: LiveSetting.switchMargin.flagHelp)
    var switchMargin: Double = 0.2

    @Option(parsing: .unconditional, help: LiveSetting.switchFrames.flagHelp)
    var switchFrames: Int = 3

    @Option(help: LiveSetting.search.flagHelp)
    var search: SearchPolicy = .scan

    @Flag(
        inversion: .prefixedNo,
        help: "Unarmed, aim a walking face where it is when the command reaches the turret (the picture's age, about 0.1 s, ahead), not where the picture showed it.")
    var lead = true

    @Option(parsing: .unconditional, help: "The servos' speed under load in seconds per 60° (the simulated servo's, and the turret loop's model); 0 for instant. calibration.md says how to measure it.")
    var servoSpeed: Double = ServoMotion.typicalSecondsPer60Degrees

    func validate() throws {
        try LiveSetting.offset.check(offset)
        try LiveSetting.deadband.check(deadband)
        try LiveSetting.lostAfter.check(lostAfter)
        if let fov { try LiveSetting.fov.check(fov) }
        try LiveSetting.kp.check(kp)
        try LiveSetting.ki.check(ki)
        try LiveSetting.kd.check(kd)
        try LiveSetting.smoothCutoff.check(smoothCutoff)
        try LiveSetting.smoothBeta.check(smoothBeta)
        try LiveSetting.hysteresis.check(hysteresis)
        try LiveSetting.switchMargin.check(switchMargin)
        try LiveSetting.switchFrames.check(switchFrames)
        try LiveSetting.trimX.check(trimX)
        try LiveSetting.trimY.check(trimY)
        try checkRange(servoSpeed, "servo-speed", 0...10, " seconds per 60° (0.2 for a loaded MG996R, 0.1 for a bare SG90)")
        if search == .lastSeen, lostAfter <= 0 {
            throw ValidationError("--search last-seen needs --lost-after above 0: how long to watch the edge before sweeping, e.g. --lost-after 2")
        }
    }

    /// A typical webcam's horizontal field of view, where `--fov` is not given (the turret loop, the fire point's range).
    static let typicalFieldOfView = 60.0

    /// What the link adds to each angle it writes.
    var trim: ServoTrim { ServoTrim(pan: trimX, tilt: trimY) }

    var settings: TrackingSettings {
        // On a turret the loop reads the field of view; on a fixed mount, given, it sets the frame's span.
        let mapper = AngleMapper(offset: offset, invertX: invertX, invertY: invertY, fieldOfView: mount == .fixed ? fov : nil)
        var settings = TrackingSettings(mapper: mapper, tiltEnabled: tilt)
        settings.mount = mount
        settings.fieldOfView = fov ?? Self.typicalFieldOfView
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
