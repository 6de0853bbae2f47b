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
/// board has rebooted, so the last command of each axis is sent again.
public final class TurretLink: @unchecked Sendable {
    // `output` and `filter` belong to the link's thread once it runs.
    private let output: any CommandOutput
    /// What the board was told: nothing twice, and every axis again after a reboot.
    private var turret = TurretState(tiltEnabled: true)
    private let inbox = Mutex<[Command]>([])
    private let wake = DispatchSemaphore(value: 0)
    private let running = Mutex(true)
    private let finished = DispatchSemaphore(value: 0)
    private let logger: Logger
    private let onExit: [Command]

    /// Bytes written to the port so far.
    public var bytesWritten: Int { written.withLock { $0 } }
    private let written = Mutex(0)
    /// The port's state for the log: `ok`, `booting`, `reconnecting`.
    public var portState: String { portStateText.withLock { $0 } }
    private let portStateText = Mutex("ok")

    /// Starts the link's thread on `output`; `onExit` is the parting command.
    public init(output: any CommandOutput, onExit: [Command], logger: Logger) {
        self.output = output
        self.onExit = onExit
        self.logger = logger
        startThread(named: "turret-link") { [self] in run() }
    }

    /// Hands commands over; they go out at once, never blocking the caller.
    public func send(_ commands: [Command]) {
        guard !commands.isEmpty else { return }
        inbox.withLock { $0 += commands }
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
            var commands = inbox.withLock { inbox in
                defer { inbox = [] }; return inbox
            }
            if output.takeReconnected() {
                let told = turret.lastWritten
                turret.rebooted(at: monotonicSeconds())
                commands = told + commands
            }
            write(turret.writeNew(commands, at: monotonicSeconds()))
        }
        write(turret.writeNew(onExit, at: monotonicSeconds()))
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
