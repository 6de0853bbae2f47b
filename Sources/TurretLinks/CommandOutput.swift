import TurretProtocol

/// Where commands go: the link to the turret, a serial port or a relay.
/// Neither kind ever blocks the frame loop: a link that is down reports
/// `reconnecting` and comes back by itself.
public protocol CommandOutput: AnyObject {
    /// Queues `commands` and writes what the link takes now, never blocking.
    func send(_ commands: [Command]) throws(LinkError)
    /// Keeps writing queued bytes until none are left or `timeout` passes.
    func flush(timeout: Double) throws(LinkError)
    /// How the link is doing, for the status line and the console.
    var state: LinkState { get }
    /// Bytes written so far.
    var bytesWritten: Int { get }
    /// True once after the link came back from a disconnect: the device may
    /// have rebooted, so the pipeline forgets what it wrote and aims again.
    func takeReconnected() -> Bool
}

/// How a link is doing.
public enum LinkState: String, Sendable, CustomStringConvertible {
    /// Connected, nothing waiting.
    case ok
    /// Connected, bytes still waiting for the link to take them.
    case busy
    /// Connected, waiting for the board to boot (an Uno resets when its port opens).
    case booting
    /// Down: trying again every `ReconnectSchedule.retryInterval`.
    case reconnecting

    public var description: String { rawValue }
}
