import Devices
import Imaging
import Logging
import Serial
import TurretLinks
import Video

/// Serial hot-plug: a port that appears is tried at once, not at the link's
/// next half-second retry, and one that disappears is dropped at once.
/// Read before each frame, without waiting.
final class SerialHotPlug: FrameObserver {
    private let port: SerialCommandOutput
    private let monitor: DeviceMonitor
    private let logger: Logger

    /// `nil` when the system offers no device events.
    init?(port: SerialCommandOutput, logger: Logger) {
        guard let monitor = DeviceMonitor(subsystems: ["tty"]) else { return nil }
        self.port = port
        self.monitor = monitor
        self.logger = logger
    }

    func willProcess(_ frame: Frame, pipeline: Pipeline) {
        for event in monitor.events(timeout: 0) {
            if event.action == "add" {
                logger.notice("udev: a serial port appeared")
                port.retryNow()
            } else if event.action == "remove", let node = event.path {
                port.deviceRemoved(node)
            }
        }
    }
}
