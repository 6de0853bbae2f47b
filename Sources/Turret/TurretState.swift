import Geometry
import TurretProtocol

/// What the turret was told, in one place: the last command written on each
/// axis (the filter sends nothing twice, SPEC §1.6), the host's model of the
/// firmware and its servos fed every command (the protocol never says where
/// the turret points), and so what to tell it again after it rebooted. The
/// tracker, lock and fire and the link read it; only `write`, `fire` and
/// `rebooted` change it.
public struct TurretState: Sendable {
    /// Which commands go on the wire, and the last one written on each axis.
    public private(set) var filter: CommandFilter
    /// The firmware and the servos as the host models them; `inout` for the
    /// tracker, which advances it to a frame's time to know the pose.
    public var model: TurretModel
    /// The servos' speed, for the model of a board that rebooted.
    public var secondsPer60Degrees: Double

    public init(deadband: Int = 0, tiltEnabled: Bool = false, secondsPer60Degrees: Double = ServoMotion.typicalSecondsPer60Degrees) {
        filter = CommandFilter(deadband: deadband, tiltEnabled: tiltEnabled)
        model = TurretModel(secondsPer60Degrees: secondsPer60Degrees)
        self.secondsPer60Degrees = secondsPer60Degrees
    }

    /// The filter's settings (`--deadband`, `--tilt`), changed while running.
    public mutating func change(deadband: Int, tiltEnabled: Bool) {
        filter.deadband = deadband
        filter.tiltEnabled = tiltEnabled
    }

    /// The commands to write for `aim` (nil: sweep), recorded as written at `time`.
    public mutating func write(_ aim: Aim?, at time: Double) -> [Command] {
        let commands = filter.commands(for: aim)
        for command in commands { model.receive(command, at: time) }
        return commands
    }

    /// Each of `commands` that differs from the last written on its axis (the
    /// parting command, or commands that come ready-made to the relay),
    /// recorded as written at `time`.
    public mutating func writeNew(_ commands: [Command], at time: Double) -> [Command] {
        let new = filter.newOnly(commands)
        for command in new { model.receive(command, at: time) }
        return new
    }

    /// A shot written at `time`.
    public mutating func fire(_ shot: Command, at time: Double) {
        model.receive(shot, at: time)
    }

    /// The board came back after a disconnect: it rebooted, centred, and
    /// remembers nothing, so every axis is written again.
    public mutating func rebooted(at time: Double) {
        filter.reset()
        model = TurretModel(secondsPer60Degrees: secondsPer60Degrees, at: time)
    }

    /// The angles the turret has been told to hold (the firmware's own state).
    public var commanded: Aim { Aim(pan: model.controller.pan, tilt: model.controller.tilt) }

    /// The last command written on each axis, to tell a board that rebooted.
    public var lastWritten: [Command] { filter.lastWritten }
}
