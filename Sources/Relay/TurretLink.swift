import Dispatch
import FoundationEssentials
import Logging
import MonotonicTime
import Serial
import Synchronization
import Threading
import Turret
import TurretLinks
import TurretProtocol

/// The relay's side of the serial port: one thread owns the port (the same
/// `SerialCommandOutput` lifecycle as sentry: exclusive access, boot wait,
/// reconnect, newest aim wins, termios restored) and writes what the
/// WebSocket side hands it, de-duplicated per axis. After a reconnect the
/// board has rebooted, so the last command of each axis is sent again. When
/// the controller leaves and when the relay stops, the turret is told
/// `onExit` (`--on-exit`: by default it holds still).
public final class TurretLink: @unchecked Sendable {
    // `output` and `filter` belong to the link's thread once it runs.
    private let output: any CommandOutput
    /// What the board was told: nothing twice, and every axis again after a reboot.
    private var turret = TurretState(tiltEnabled: true)
    private let inbox = Mutex(Inbox())
    /// What the WebSocket side handed over since the link's last turn.
    private struct Inbox {
        var commands: [Command] = []
        /// The controller left: tell the turret `onExit` after `commands`.
        var released = false
    }
    private let wake = DispatchSemaphore(value: 0)
    private let running = Mutex(true)
    private let finished = DispatchSemaphore(value: 0)
    private let logger: Logger
    private let onExit: ExitCommand

    /// Bytes written to the port so far.
    public var bytesWritten: Int { written.withLock { $0 } }
    private let written = Mutex(0)
    /// The port's state for the log: `ok`, `booting`, `reconnecting`.
    public var portState: String { portStateText.withLock { $0 } }
    private let portStateText = Mutex("ok")

    /// Starts the link's thread on `output`; `onExit` is what the turret is
    /// told when the controller leaves and when the link stops.
    public init(output: any CommandOutput, onExit: ExitCommand, logger: Logger) {
        self.output = output
        self.onExit = onExit
        self.logger = logger
        startThread(named: "turret-link") { [self] in run() }
    }

    /// Hands commands over; they go out at once, never blocking the caller.
    public func send(_ commands: [Command]) {
        guard !commands.isEmpty else { return }
        inbox.withLock { $0.commands += commands }
        wake.signal()
    }

    /// The controller let go: the turret is told `onExit`.
    public func release() {
        inbox.withLock { $0.released = true }
        wake.signal()
    }

    /// Sends the parting command, flushes, restores the port and stops.
    public func stop() {
        guard
            running.withLock({ running in
                defer { running = false }; return running
            })
        else { return }
        wake.signal()
        finished.wait()
    }

    private func run() {
        while running.withLock({ $0 }) {
            // Wake for new commands, or every 20 ms to see whether the port came
            // back (the link reconnects on its own thread; the state is re-sent here).
            _ = wake.wait(timeout: .now() + .milliseconds(20))
            let handed = inbox.withLock { inbox in
                defer { inbox = Inbox() }; return inbox
            }
            var commands = handed.commands
            if output.takeReconnected() {
                let told = turret.lastWritten
                turret.rebooted(at: monotonicSeconds())
                commands = told + commands
            }
            var new = turret.writeNew(commands, at: monotonicSeconds())
            if handed.released { new += onExit.commands(for: &turret, at: monotonicSeconds()) }
            write(new)
        }
        write(onExit.commands(for: &turret, at: monotonicSeconds()))
        do { try output.flush(timeout: 1) } catch { logger.warning("\(error)") }
        finished.signal()
    }

    private func write(_ commands: [Command]) {
        // One at a time: a port that keeps up gets every command in order;
        // only one that falls behind has a waiting aim replaced by a newer one.
        for command in commands {
            do {
                try output.send([command])
            } catch {
                logger.warning("\(error)")
            }
        }
        let bytes = output.bytesWritten
        written.withLock { $0 = bytes }
        let state = output.state
        portStateText.withLock { $0 = state.description }
    }
}
