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

    /// `nil` when the system offers no device events.
    init?(port: SerialCommandOutput, logger: Logger) {
        guard let monitor = DeviceMonitor(subsystems: ["tty"]) else { return nil }
        let events = Events(monitor)
        startThread(named: "serial-hotplug") { [self] in
            while running.load(ordering: .relaxed) {
                // A second at most between looks at `running`.
                for event in events.monitor.events(timeout: 1) {
                    if event.action == "add" {
                        logger.notice("udev: a serial port appeared")
                        port.retryNow()
                    } else if event.action == "remove", let node = event.path {
                        port.deviceRemoved(node)
                    }
                }
            }
        }
    }

    /// Stops the thread within a second, without waiting for it: all it could
    /// still do is wake a link that is closing, which does nothing.
    func stop() {
        running.store(false, ordering: .relaxed)
    }

    /// The monitor, handed to the thread that alone reads it.
    private final class Events: @unchecked Sendable {
        let monitor: DeviceMonitor
        init(_ monitor: DeviceMonitor) { self.monitor = monitor }
    }
}
