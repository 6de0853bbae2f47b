import SentryCore
import Serial

/// Where commands go: the serial link to the turret.
public protocol CommandOutput: AnyObject {
    /// Queues `commands` and writes what the link takes now, never blocking.
    func send(_ commands: [Command]) throws(SerialError)
    /// Keeps writing queued bytes until none are left or `timeout` passes.
    func flush(timeout: Double) throws(SerialError)
    /// A short word for the status line, e.g. `ok` or `busy`.
    var state: String { get }
    /// Bytes written so far.
    var bytesWritten: Int { get }
}

/// Commands to a `SerialPort`, through an `OutgoingQueue` so that a full
/// port drops stale aims instead of stalling the pipeline.
public final class SerialCommandOutput: CommandOutput {
    public let port: SerialPort
    private var queue = OutgoingQueue()
    public private(set) var bytesWritten = 0

    public init(port: SerialPort) {
        self.port = port
    }

    public var state: String { queue.isEmpty ? "ok" : "busy" }

    public func send(_ commands: [Command]) throws(SerialError) {
        for command in commands { queue.enqueue(command) }
        try writePending()
    }

    public func flush(timeout: Double) throws(SerialError) {
        let deadline = monotonicSeconds() + timeout
        try writePending()
        while !queue.isEmpty, monotonicSeconds() < deadline {
            usleepOneMillisecond()
            try writePending()
        }
        port.drain(timeout: max(0, deadline - monotonicSeconds()))
    }

    private func writePending() throws(SerialError) {
        let bytes = queue.pendingBytes
        guard !bytes.isEmpty else { return }
        let written = try port.write(bytes)
        queue.markWritten(written)
        bytesWritten += written
    }
}

#if canImport(Glibc)
import Glibc
#endif
private func usleepOneMillisecond() { usleep(1000) }
