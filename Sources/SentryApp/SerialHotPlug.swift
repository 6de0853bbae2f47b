import Devices
import Logging
import Synchronization
import Threading
import TurretLinks

/// Serial hot-plug: a port that appears is tried at once, not at the link's
/// next half-second retry, and one that disappears is let go at once. udev's
/// events are read on a thread of their own, so a slow frame never delays them.
final class SerialHotPlug: Sendable {
    private let running = Atomic(true)
    private let finished = Condition()
    private let done = Mutex(false)

    /// `nil` when the system offers no device events.
    init?(port: SerialCommandOutput, logger: Logger) {
        guard let monitor = DeviceMonitor(subsystems: ["tty"]) else { return nil }
        let events = Events(monitor)
        startThread(named: "serial-hotplug") { [self] in
            while running.load(ordering: .relaxed) {
                // A second at most between looks at `running`, so `stop` is quick.
                for event in events.monitor.events(timeout: 1) {
                    if event.action == "add" {
                        logger.notice("udev: a serial port appeared")
                        port.retryNow()
                    } else if event.action == "remove", let node = event.path {
                        port.deviceRemoved(node)
                    }
                }
            }
            finished.withLock {
                done.withLock { $0 = true }
                finished.broadcast()
            }
        }
    }

    /// Stops the thread (within a second) and lets go of the monitor.
    func stop() {
        running.store(false, ordering: .relaxed)
        _ = finished.wait(seconds: 2) { done.withLock { $0 } }
    }

    /// The monitor, handed to the thread that alone reads it.
    private final class Events: @unchecked Sendable {
        let monitor: DeviceMonitor
        init(_ monitor: DeviceMonitor) { self.monitor = monitor }
    }
}
