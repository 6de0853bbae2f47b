import TurretProtocol

/// A link that adds `--trim-x`/`--trim-y` to every angle it passes on.
///
/// Two aims a degree apart can trim to the same angle at the protocol's end
/// (179° and 180° with +5°), so it drops an aim equal to the last one it
/// wrote on that axis, as SPEC §1 asks of every command; after a reconnect
/// the board has rebooted and every aim is new again. A new trim (the
/// console's) moves the servos at once: the aims held go out again, trimmed
/// anew, with the next commands.
public final class TrimmedCommandOutput: CommandOutput {
    public let link: any CommandOutput
    public private(set) var trim: ServoTrim
    /// The last aim (or `L`) asked for on each axis, untrimmed, and as written.
    private var lastAsked: [Command.Axis: Command] = [:]
    private var lastWritten: [Command.Axis: Command] = [:]
    private var resendHeld = false

    public init(_ link: any CommandOutput, trim: ServoTrim = ServoTrim()) {
        self.link = link
        self.trim = trim
    }

    /// Takes `new` from the next `send` on, which also re-aims what is held.
    public func change(trim new: ServoTrim) {
        guard new != trim else { return }
        trim = new
        resendHeld = true
    }

    /// Always reaches the link, with nothing to write too: a frame's call is
    /// what moves a link along (a relay's reconnect is attempted from it).
    public func send(_ commands: [Command]) throws(LinkError) {
        if commands.isEmpty, !resendHeld { return try link.send([]) }  // most frames: a still face
        var asked = lastAsked
        var held: [Command] = []
        if resendHeld { held = [Command.Axis.pan, .tilt].compactMap { axis in asked[axis].flatMap { $0 == .lost ? nil : $0 } } }
        var written = lastWritten
        var trimmed: [Command] = []
        for command in held + commands {
            let wire = trim.applied(to: command)
            if command.axis != .trigger {
                asked[command.axis] = command
                if written[command.axis] == wire { continue }
                written[command.axis] = wire
            }
            trimmed.append(wire)
        }
        try link.send(trimmed)
        (lastAsked, lastWritten, resendHeld) = (asked, written, false)
    }

    public func flush(timeout: Double) throws(LinkError) { try link.flush(timeout: timeout) }
    public var state: LinkState { link.state }
    public var bytesWritten: Int { link.bytesWritten }

    public func takeReconnected() -> Bool {
        let reconnected = link.takeReconnected()
        if reconnected { (lastAsked, lastWritten) = ([:], [:]) }
        return reconnected
    }
}
