import TurretProtocol

/// A hobby servo's horn travelling toward its commanded angle at a fixed
/// speed: commands are instant, the turret is not. Data sheets say 0.1-0.17 s
/// per 60° unloaded; an MG996R carrying a camera or a blaster takes about 0.2.
public struct ServoMotion: Sendable, Equatable {
    /// Seconds per 60° of a hobby servo under a turret's load (the bundled
    /// firmware assumes the same, `ServoController.servoSecondsPer60Degrees`).
    public static let typicalSecondsPer60Degrees = ServoController.servoSecondsPer60Degrees

    /// How fast the horn turns; `.infinity` jumps at once.
    public var degreesPerSecond: Double
    /// Where the horn points now, in degrees.
    public private(set) var position: Double
    /// The time `position` refers to (seconds, any monotonic clock).
    public private(set) var time: Double

    public init(position: Double, at time: Double = 0, secondsPer60Degrees: Double = Self.typicalSecondsPer60Degrees) {
        self.position = position
        self.time = time
        degreesPerSecond = secondsPer60Degrees > 0 ? 60 / secondsPer60Degrees : .infinity
    }

    /// Moves the horn toward `target` for the time between the last call and
    /// `now`; a `now` in the past changes nothing.
    public mutating func advance(toward target: Double, until now: Double) {
        guard now > time else { return }
        let reach = degreesPerSecond * (now - time)
        let gap = target - position
        position = abs(gap) <= reach ? target : position + (gap > 0 ? reach : -reach)
        time = now
    }
}

/// The turret as a physical thing: the firmware's state machine
/// (`ServoController`) fed the bytes of the wire, plus the time its servos
/// take to get where they were told. The simulated servo uses it to know
/// where a camera on the head looks; the host uses the same model to know
/// where it has pointed the turret, since the protocol never says.
public struct TurretModel: Sendable, Equatable {
    public private(set) var controller: ServoController
    private var panMotion: ServoMotion
    private var tiltMotion: ServoMotion

    public init(limits: ClosedRange<Int> = 0...180, secondsPer60Degrees: Double = ServoMotion.typicalSecondsPer60Degrees, at time: Double = 0) {
        controller = ServoController(limits: limits)
        panMotion = ServoMotion(position: Double(controller.pan), at: time, secondsPer60Degrees: secondsPer60Degrees)
        tiltMotion = ServoMotion(position: Double(controller.tilt), at: time, secondsPer60Degrees: secondsPer60Degrees)
    }

    /// Where the horns point (degrees), as of the last `advance` or `receive`.
    public var pan: Double { panMotion.position }
    public var tilt: Double { tiltMotion.position }

    /// Feeds one byte of the wire, received at `time`.
    public mutating func receive(_ byte: UInt8, at time: Double) {
        advance(to: time)
        controller.receive(byte, at: time)
    }

    /// Feeds a whole command, sent at `time`.
    public mutating func receive(_ command: Command, at time: Double) {
        for byte in command.bytes { receive(byte, at: time) }
    }

    /// Runs the sweep and the servos' travel up to `time`.
    public mutating func advance(to time: Double) {
        controller.advance(to: time)
        panMotion.advance(toward: Double(controller.pan), until: time)
        tiltMotion.advance(toward: Double(controller.tilt), until: time)
    }
}
