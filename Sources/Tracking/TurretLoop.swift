/// The closed loop for a camera riding on the pan/tilt head (`--mount
/// turret`, SPEC §8): the face's offset from the frame centre, in degrees,
/// corrects the current aim.
///
/// The protocol never says where the turret is, so "the current aim" is the
/// pose of the tracker's `TurretModel` (the firmware's state machine fed
/// every command sent, with the servos' travel time) at the frame's time;
/// without it a servo still on its way would look like an error still to
/// correct, and the aim would overshoot.
///
/// Each axis is a PID on the error in degrees: aim = pose + Kp·e + Ki·∫e +
/// Kd·de/dt. Kp alone already removes a still face's error (the pose moves
/// until the error is gone); Ki takes out the lag behind a face that keeps
/// moving and the last part-degree; it only integrates errors over half a
/// degree (what whole-degree commands cannot resolve) so it never hunts.
public struct TurretLoop: Sendable {
    public struct Gains: Sendable, Equatable {
        public var proportional: Double
        public var integral: Double
        public var derivative: Double

        /// Fast without overshoot when `--fov` is right to ±30 % (see the
        /// convergence tests in the virtual camera).
        public static let standard = Gains(proportional: 0.7, integral: 0.5, derivative: 0)

        public init(proportional: Double, integral: Double, derivative: Double) {
            self.proportional = proportional
            self.integral = integral
            self.derivative = derivative
        }
    }

    /// The camera's horizontal field of view in degrees; the vertical one
    /// follows from the frame's aspect (square pixels).
    public var fieldOfView: Double
    public var gains: Gains
    /// Where aims may go: the offset limits of SPEC §2.
    public var limits: ClosedRange<Int>
    public var invertX: Bool
    public var invertY: Bool
    private var panAxis = PID()
    private var tiltAxis = PID()

    public init(
        fieldOfView: Double, gains: Gains = .standard, limits: ClosedRange<Int> = 40...140,
        invertX: Bool = false, invertY: Bool = false
    ) {
        self.fieldOfView = fieldOfView
        self.gains = gains
        self.limits = limits
        self.invertX = invertX
        self.invertY = invertY
    }

    /// The angle between the camera's axis and `point` (pixels in a
    /// `width` x `height` frame), in degrees, in servo directions: positive
    /// means a larger servo angle brings it to the centre.
    public func offset(of point: (x: Double, y: Double), width: Int, height: Int) -> (pan: Double, tilt: Double) {
        let degreesPerPixel = fieldOfView / Double(width)
        let pan = (point.x - Double(width) / 2) * degreesPerPixel
        let tilt = (point.y - Double(height) / 2) * degreesPerPixel
        return (invertX ? -pan : pan, invertY ? -tilt : tilt)
    }

    /// The unrounded aim that corrects `error` (degrees, as from `offset`)
    /// seen at `time` with the turret at `pose`, clamped to `limits`.
    public mutating func aim(
        correcting error: (pan: Double, tilt: Double), from pose: (pan: Double, tilt: Double),
        at time: Double
    ) -> (pan: Double, tilt: Double) {
        let range = Double(limits.lowerBound)...Double(limits.upperBound)
        return (
            panAxis.output(pose: pose.pan, error: error.pan, at: time, gains: gains, range: range),
            tiltAxis.output(pose: pose.tilt, error: error.tilt, at: time, gains: gains, range: range)
        )
    }

    /// The target changed or was lost: start the integral and derivative afresh.
    public mutating func restart() {
        panAxis = PID()
        tiltAxis = PID()
    }
}

/// One axis of the loop.
private struct PID: Sendable {
    /// Errors below this are what whole degrees cannot resolve: not integrated.
    static let integrationThreshold = 0.5
    /// The integral never pushes the aim by more than this many degrees.
    static let integralReach = 3.0

    var integral = 0.0
    var last: (time: Double, error: Double)?

    mutating func output(pose: Double, error: Double, at time: Double, gains: TurretLoop.Gains, range: ClosedRange<Double>) -> Double {
        var derivative = 0.0
        let before = integral
        if let last, time > last.time {
            let dt = time - last.time
            if abs(error) > Self.integrationThreshold, gains.integral > 0 {
                let bound = Self.integralReach / gains.integral
                integral = min(max(integral + error * dt, -bound), bound)
            }
            derivative = (error - last.error) / dt
        }
        last = (time, error)
        let aim = pose + gains.proportional * error + gains.integral * integral + gains.derivative * derivative
        // Anti-windup: pressed against a limit, the integral does not grow.
        if !range.contains(aim) { integral = before }
        return min(max(aim, range.lowerBound), range.upperBound)
    }
}
