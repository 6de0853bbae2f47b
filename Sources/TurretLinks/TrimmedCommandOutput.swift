import TurretProtocol

/// A link that adds `--trim-x`/`--trim-y` to every angle it passes on.
///
/// Two aims a degree apart can trim to the same angle at the protocol's end
/// (179° and 180° with +5°), so it drops an aim equal to the last one it
/// wrote on that axis, as SPEC §1 asks of every command; after a reconnect
/// the board has rebooted and every aim is new again.
public final class TrimmedCommandOutput: CommandOutput {
    public let link: any CommandOutput
    public let trim: ServoTrim
    private var lastWritten: [Command.Axis: Command] = [:]

    public init(_ link: any CommandOutput, trim: ServoTrim) {
        self.link = link
        self.trim = trim
    }

    public func send(_ commands: [Command]) throws(LinkError) {
        var written = lastWritten
        var trimmed: [Command] = []
        for command in commands.map(trim.applied(to:)) {
            if command.axis != .trigger {
                if written[command.axis] == command { continue }
                written[command.axis] = command
            }
            trimmed.append(command)
        }
        guard !trimmed.isEmpty else { return }
        try link.send(trimmed)
        lastWritten = written
    }

    public func flush(timeout: Double) throws(LinkError) { try link.flush(timeout: timeout) }
    public var state: LinkState { link.state }
    public var bytesWritten: Int { link.bytesWritten }

    public func takeReconnected() -> Bool {
        let reconnected = link.takeReconnected()
        if reconnected { lastWritten.removeAll() }
        return reconnected
    }
}
