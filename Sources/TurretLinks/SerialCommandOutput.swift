import FoundationEssentials
import Logging
import MonotonicTime
import Serial
import TurretProtocol
import TextOutput

#if canImport(Glibc)
    import Glibc
#endif

/// Commands to a serial port (SPEC §5), kept alive across unplugging:
///
/// - writes go through an `OutgoingQueue`, so a full port drops stale aims
///   instead of stalling the pipeline;
/// - after each open it waits `bootWait` seconds (an Uno resets when the port
///   opens), or until the board prints a `READY` line;
/// - when the device goes away it reports `reconnecting`, drops what was
///   queued, and reopens the path every half second until it is back. It
///   looks for a hang-up on every call, not only when writing, so a replug
///   while nothing is sent (no face, `L` already sent) is noticed at once.
public final class SerialCommandOutput: QueuedLink {
    public let path: String
    public let baudRate: Int
    /// `nil`: 2 s for a real device, 0 for a pseudo-terminal.
    public let bootWait: Double?
    private let logger: Logger
    private var port: SerialPort?
    var queue = OutgoingQueue()
    private var writableAt = 0.0
    private var received: [UInt8] = []
    var reconnect = ReconnectSchedule()
    public private(set) var bytesWritten = 0
    /// How many times the port came back after a disconnect.
    public private(set) var reconnectCount = 0

    static let defaultBootWait = 2.0

    /// Opens the port; errors here (bad path, permissions, busy) are the
    /// user's to fix, so they are thrown, not retried.
    public init(path: String, baudRate: Int = 9600, bootWait: Double? = nil, logger: Logger = Logger(label: "sentry.serial")) throws(LinkError) {
        self.path = path
        self.baudRate = baudRate
        self.bootWait = bootWait
        self.logger = logger
        do {
            try open()
        } catch {
            throw LinkError(error)
        }
    }

    public var state: LinkState {
        if port == nil { return .reconnecting }
        if monotonicSeconds() < writableAt { return .booting }
        return queue.isEmpty ? .ok : .busy
    }

    public func flush(timeout: Double) throws(LinkError) {
        let deadline = monotonicSeconds() + timeout
        service()
        while !queue.isEmpty, let port, monotonicSeconds() < deadline {
            // Booting: the READY line or the end of the boot wait; else room in the port.
            let booting = monotonicSeconds() < writableAt
            port.wait(until: booting ? .readable : .writable, timeout: min(deadline, booting ? writableAt : deadline) - monotonicSeconds())
            service()
        }
        port?.drain(timeout: max(0, deadline - monotonicSeconds()))
    }

    /// Tries to reopen a lost port now rather than at the next half-second poll.
    public func retryNow() {
        reconnect.retryNow()
    }

    /// The device node the port resolved to when it was opened (through
    /// symlinks such as /dev/serial/by-id/…), to match udev events.
    public private(set) var deviceNode: String?

    /// udev says `node` was removed: if it is ours, let go of it now.
    public func deviceRemoved(_ node: String) {
        guard port != nil, node == deviceNode else { return }
        logger.warning("serial port \(path) was removed; waiting for it to come back")
        disconnect()
    }

    /// Closes the port, restoring its settings.
    public func close() {
        port?.close()
        port = nil
    }

    private func open() throws(SerialError) {
        let opened = try SerialPort(path: path, baudRate: baudRate)
        let wait = bootWait ?? (opened.isPseudoTerminal ? 0 : Self.defaultBootWait)
        writableAt = monotonicSeconds() + wait
        received = []
        port = opened
        deviceNode = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    /// Reconnects when due, waits out the boot, writes what the port takes.
    func service() {
        if port == nil {
            guard reconnect.attemptIsDue() else { return }
            do {
                try open()
                reconnectCount += 1
                reconnect.cameBack()
                logger.notice("serial port \(path) is back; aiming again")
            } catch {
                logger.debug("serial port \(path) not back yet: \(error.reason)")
                return
            }
        }
        do {
            try port?.checkConnected()
            try waitForBoot()
            try writePending()
        } catch {
            logger.warning("\(error.description)")
            disconnect()
        }
    }

    private func waitForBoot() throws(SerialError) {
        guard let port, monotonicSeconds() < writableAt else { return }
        received += try port.read()
        if received.split(separator: UInt8(ascii: "\n")).contains(where: {
            String(decoding: $0, as: UTF8.self).trimmed() == "READY"
        }) {
            writableAt = 0
        }
    }

    private func writePending() throws(SerialError) {
        guard let port, monotonicSeconds() >= writableAt else { return }
        let bytes = queue.pendingBytes
        guard !bytes.isEmpty else { return }
        let written = try port.write(bytes)
        queue.markWritten(written)
        bytesWritten += written
    }

    private func disconnect() {
        port?.close()
        port = nil
        queue.removeAll()
        reconnect.wentDown()
    }
}
