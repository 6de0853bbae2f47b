#if canImport(Glibc)
    import Glibc
#endif
import FoundationEssentials
import Logging
import MonotonicTime
import Serial
import TextOutput
import Threading
import TurretProtocol

/// Commands to a serial port (SPEC §5), kept alive across unplugging:
///
/// - writes go through an `OutgoingQueue`, so a full port drops stale aims
///   instead of stalling the pipeline;
/// - after each open it waits `bootWait` seconds (an Uno resets when the port
///   opens), or until the board prints a `READY` line;
/// - when the device goes away it reports `reconnecting`, drops what was
///   queued, and reopens the port every half second until it is back;
/// - once the board has said `READY` (the bundled sketch, whose link timeout
///   stops the turret after a few seconds without a byte), a newline goes
///   out after each second with nothing else written: the keep-alive. The
///   original sketch says nothing and never gets one.
///
/// The port has a thread of its own, the link thread, asleep in `poll` on the
/// port and a wake-up pipe. A hang-up is seen the moment the kernel reports
/// it, and the port is closed at once, however long a frame takes: a port
/// held open after its device left keeps the device's name, so a board
/// plugged back in would come back under another one (`ttyUSB1`). Only the
/// link thread opens and closes the port; `send` writes on the caller's
/// thread, so `bytesWritten` counts a frame's bytes when `send` returns.
public final class SerialCommandOutput: CommandOutput, @unchecked Sendable {
    /// The port as the user named it.
    public let path: String
    public let baudRate: Int
    /// `nil`: 2 s for a real device, 0 for a pseudo-terminal.
    public let bootWait: Double?
    private let logger: Logger
    /// Where the board is now when `path` is gone, for `--serial auto`: a
    /// board plugged back in may get another name.
    private let relocate: (@Sendable () -> String?)?

    /// What the caller's thread and the link thread share; only under `condition`'s lock.
    private struct Shared {
        var port: SerialPort?
        /// Where the port was opened: `path`, or where `relocate` found the board.
        var openedPath: String
        /// The device node the port resolved to (through symlinks such as
        /// /dev/serial/by-id/…), to match udev events.
        var deviceNode: String?
        var queue = OutgoingQueue()
        var writableAt = 0.0
        var received: [UInt8] = []
        /// The board printed READY since the port opened: the bundled sketch, which wants keep-alives.
        var bundledFirmware = false
        /// When the last byte went out (commands or keep-alive).
        var lastWrite = 0.0
        var reconnect = ReconnectSchedule()
        var bytesWritten = 0
        var reconnectCount = 0
        /// Why the port has to go (a failed write, udev's removal): the link thread closes it.
        var lost: String?
        var running = true
        var finished = false
    }
    private var shared: Shared
    private let condition = Condition()
    private let wakeUp: WakePipe

    static let defaultBootWait = 2.0
    /// Seconds of silence after which a keep-alive newline goes to the bundled
    /// sketch: well inside its link timeout (5 s), with room for a busy host.
    static let keepAliveInterval = 1.0
    /// How long the link thread sleeps with nothing to wait for but a hang-up.
    static let idleWatch = 1.0

    /// Opens the port; errors here (bad path, permissions, busy) are the
    /// user's to fix, so they are thrown, not retried.
    public init(
        path: String, baudRate: Int = 9600, bootWait: Double? = nil, relocate: (@Sendable () -> String?)? = nil,
        logger: Logger = Logger(label: "sentry.serial")
    ) throws(LinkError) {
        self.path = path
        self.baudRate = baudRate
        self.bootWait = bootWait
        self.relocate = relocate
        self.logger = logger
        shared = Shared(openedPath: path)
        let port: SerialPort
        do {
            port = try SerialPort(path: path, baudRate: baudRate)
        } catch {
            throw LinkError(error)
        }
        guard let wakeUp = WakePipe() else {
            throw LinkError(
                .serialPort(.other), link: "serial port \(path)", reason: "cannot make a pipe (out of file descriptors)",
                hint: "raise the open-files limit (ulimit -n)")
        }
        self.wakeUp = wakeUp
        install(port, openedAt: path)
        startThread(named: "serial-link") { [self] in
            while turn() {}
            condition.withLock {
                shared.finished = true
                condition.broadcast()
            }
        }
    }

    public var state: LinkState {
        condition.withLock {
            if shared.port == nil || shared.lost != nil { return .reconnecting }
            if monotonicSeconds() < shared.writableAt { return .booting }
            return shared.queue.isEmpty ? .ok : .busy
        }
    }

    public var bytesWritten: Int { condition.withLock { shared.bytesWritten } }
    /// How many times the port came back after a disconnect.
    public var reconnectCount: Int { condition.withLock { shared.reconnectCount } }
    /// The device node of the open port, to match udev events.
    public var deviceNode: String? { condition.withLock { shared.deviceNode } }

    /// Queues `commands` and writes what the port takes now, never blocking;
    /// the link thread writes the rest as the port makes room.
    public func send(_ commands: [Command]) throws(LinkError) {
        let leftOver = condition.withLock {
            for command in commands { shared.queue.enqueue(command) }
            writePendingOrMarkLost()
            return !shared.queue.isEmpty || shared.lost != nil
        }
        if leftOver { wakeUp.wake() }
    }

    public func takeReconnected() -> Bool {
        condition.withLock { shared.reconnect.takeReconnected() }
    }

    /// Waits until the queue is written or `timeout` passes, then for the
    /// port's own buffer to drain in what is left of it.
    public func flush(timeout: Double) throws(LinkError) {
        let deadline = monotonicSeconds() + timeout
        wakeUp.wake()
        _ = condition.wait(seconds: timeout) { shared.queue.isEmpty || shared.port == nil || !shared.running }
        condition.withLock { shared.port?.drain(timeout: max(0, deadline - monotonicSeconds())) }
    }

    /// Tries to reopen a lost port now rather than at the next half-second poll.
    public func retryNow() {
        condition.withLock { shared.reconnect.retryNow() }
        wakeUp.wake()
    }

    /// udev says `node` was removed: if it is ours, let go of it now.
    public func deviceRemoved(_ node: String) {
        let ours = condition.withLock {
            guard shared.port != nil, node == shared.deviceNode else { return false }
            shared.lost = "serial port \(path) was removed; waiting for it to come back"
            return true
        }
        if ours { wakeUp.wake() }
    }

    /// Stops the link thread and closes the port, restoring its settings. Idempotent.
    public func close() {
        condition.withLock { shared.running = false }
        wakeUp.wake()
        // The link thread's turns are short (no call in them blocks), so this wait is too.
        _ = condition.wait(seconds: 10) { shared.finished }
        condition.withLock {
            shared.port?.close()
            shared.port = nil
        }
    }

    // MARK: - Under the lock

    /// Makes `port` the link's port; after a disconnect (`cameBack`) the
    /// pipeline is told, once. False, and nothing installed, when the link is closing.
    @discardableResult
    private func install(_ port: SerialPort, openedAt openedPath: String, cameBack: Bool = false) -> Bool {
        let wait = bootWait ?? (port.isPseudoTerminal ? 0 : Self.defaultBootWait)
        let node = URL(fileURLWithPath: openedPath).resolvingSymlinksInPath().path
        return condition.withLock {
            guard shared.running else { return false }
            shared.port = port
            shared.openedPath = openedPath
            shared.deviceNode = node
            shared.writableAt = monotonicSeconds() + wait
            shared.received = []
            shared.bundledFirmware = false
            shared.lost = nil
            if cameBack {
                shared.reconnectCount += 1
                shared.reconnect.cameBack()
            }
            return true
        }
    }

    /// Writes what the port takes now, once the boot is over; a port that
    /// fails is marked lost for the link thread to close.
    private func writePendingOrMarkLost() {
        guard let port = shared.port, shared.lost == nil, monotonicSeconds() >= shared.writableAt else { return }
        let bytes = shared.queue.pendingBytes
        guard !bytes.isEmpty else { return }
        do {
            let written = try port.write(bytes)
            shared.queue.markWritten(written)
            shared.bytesWritten += written
            if written > 0 { shared.lastWrite = monotonicSeconds() }
        } catch {
            shared.lost = error.description
        }
    }

    /// What the board says: its boot is over when it prints READY (or when
    /// the wait ends), and READY names the bundled sketch.
    private func readBoard(_ port: SerialPort) throws(SerialError) {
        guard !shared.bundledFirmware else { return }
        // Only the tail matters: a board that chatters cannot grow it.
        shared.received = Array((shared.received + (try port.read())).suffix(64))
        if shared.received.split(separator: UInt8(ascii: "\n")).contains(where: {
            String(decoding: $0, as: UTF8.self).trimmed() == "READY"
        }) {
            shared.writableAt = 0
            shared.bundledFirmware = true
            // Its link timer starts at its boot: the first keep-alive is due a second from now.
            shared.lastWrite = monotonicSeconds()
        }
    }

    /// A newline to the bundled sketch when nothing went out for a second;
    /// never in the middle of a command (the queue is empty).
    private func keepAlive(_ port: SerialPort) {
        let now = monotonicSeconds()
        guard shared.bundledFirmware, shared.lost == nil, shared.queue.isEmpty, now >= shared.writableAt,
            now - shared.lastWrite >= Self.keepAliveInterval
        else { return }
        do {
            if try port.write([UInt8(ascii: "\n")]) == 1 { shared.lastWrite = now }
        } catch {
            shared.lost = error.description
        }
    }

    // MARK: - The link thread

    /// What the link thread does next, decided under the lock and done outside it.
    private enum Turn {
        case stop
        case close(SerialPort, reason: String)
        case reopen(String)
        case waitForRetry(seconds: Double)
        case watch(descriptor: Int32, events: Int16, seconds: Double)
    }

    /// One turn of the link thread; false once the link is closing.
    private func turn() -> Bool {
        switch nextTurn() {
        case .stop:
            return false
        case .close(let port, let reason):
            port.close()
            logger.warning("\(reason)")
        case .reopen(let openedPath):
            reopen(openedPath)
        case .waitForRetry(let seconds):
            sleep(watching: nil, seconds: seconds)
        case .watch(let descriptor, let events, let seconds):
            sleep(watching: (descriptor, events), seconds: seconds)
            condition.withLock {
                guard let port = shared.port, port.descriptor?.rawValue == descriptor, shared.lost == nil else { return }
                do throws(SerialError) {
                    try port.checkConnected()
                    try readBoard(port)
                    writePendingOrMarkLost()
                    keepAlive(port)
                } catch {
                    shared.lost = error.description
                }
                condition.broadcast()
            }
        }
        return true
    }

    private func nextTurn() -> Turn {
        condition.withLock {
            guard shared.running else { return .stop }
            if let reason = shared.lost, let port = shared.port {
                shared.port = nil
                shared.lost = nil
                shared.queue.removeAll()
                shared.reconnect.wentDown()
                condition.broadcast()
                return .close(port, reason: reason)
            }
            guard let port = shared.port, let descriptor = port.descriptor?.rawValue else {
                return shared.reconnect.attemptIsDue() ? .reopen(shared.openedPath) : .waitForRetry(seconds: shared.reconnect.secondsUntilAttempt())
            }
            let now = monotonicSeconds()
            if now < shared.writableAt {
                return .watch(descriptor: descriptor, events: Int16(POLLIN), seconds: shared.writableAt - now)
            }
            // Listen for READY until it came; wake in time for the next keep-alive once it did.
            let listen = shared.bundledFirmware ? 0 : Int16(POLLIN)
            let idle = shared.bundledFirmware ? max(0.01, shared.lastWrite + Self.keepAliveInterval - now) : Self.idleWatch
            return .watch(descriptor: descriptor, events: listen | (shared.queue.isEmpty ? 0 : Int16(POLLOUT)), seconds: min(idle, Self.idleWatch))
        }
    }

    /// Sleeps until the port is ready for `events` or hangs up (POLLHUP
    /// comes without asking), another thread wakes the link, or `seconds` pass.
    private func sleep(watching port: (descriptor: Int32, events: Int16)?, seconds: Double) {
        var watched = [pollfd(fd: wakeUp.readEnd, events: Int16(POLLIN), revents: 0)]
        if let port { watched.append(pollfd(fd: port.descriptor, events: port.events, revents: 0)) }
        _ = poll(&watched, nfds_t(watched.count), Int32((max(0, seconds) * 1000).rounded(.up)))
        if watched[0].revents != 0 { wakeUp.drain() }
    }

    /// Opens the port again where it was, or where `relocate` finds the board now.
    private func reopen(_ openedPath: String) {
        var opened: (SerialPort, String)?
        var failure: SerialError?
        do {
            opened = (try SerialPort(path: openedPath, baudRate: baudRate), openedPath)
        } catch {
            failure = error
            if error.kind == .notFound, let elsewhere = relocate?(), elsewhere != openedPath {
                do {
                    opened = (try SerialPort(path: elsewhere, baudRate: baudRate), elsewhere)
                } catch {
                    failure = error
                }
            }
        }
        guard let (port, at) = opened else {
            logger.debug("serial port \(path) not back yet: \(failure?.reason ?? "")")
            return
        }
        guard install(port, openedAt: at, cameBack: true) else { return port.close() }
        logger.notice("serial port \(path) is back\(at == path ? "" : " as \(at)"); aiming again")
    }
}
