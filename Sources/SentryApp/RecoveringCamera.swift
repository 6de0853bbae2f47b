import Devices
import FoundationEssentials
import Glibc
import Imaging
import Logging
import Video

/// The frame source of a run. A live camera that goes away (unplugged, its
/// driver reloaded) is waited for and reopened, so the serial link and the
/// turret's state survive; a file or the virtual camera has nothing to come
/// back, so its errors end the run.
final class RecoveringCamera {
    /// What the loop gets next.
    enum Next {
        case frame(Frame)
        /// The stream ended.
        case end
        /// A live camera failed; `reopen()` waits for it.
        case lost(VideoError)
    }

    private(set) var source: any FrameSource
    /// What `--camera` named (`/dev/video0`): how the log and the console speak of it.
    let path: String
    private let reopenSource: () throws(VideoError) -> any FrameSource
    private let keepsColour: Bool
    private let logger: Logger

    /// `reopen` opens the camera again (the same device, as the options say).
    init(
        _ source: any FrameSource, path: String, keepsColour: Bool, logger: Logger,
        reopen: @escaping () throws(VideoError) -> any FrameSource
    ) {
        self.source = source
        self.path = path
        self.keepsColour = keepsColour
        self.logger = logger
        reopenSource = reopen
        self.source.keepsColour = keepsColour
    }

    func next() throws(VideoError) -> Next {
        do {
            return try source.nextFrame().map(Next.frame) ?? .end
        } catch {
            guard source.comesBack else { throw error }
            logger.warning("\(error.description)")
            return .lost(error)
        }
    }

    /// Reopens the camera when udev reports a video device (or at least once
    /// a second) until it is back: its path; nil when a signal stopped the wait.
    func reopen() -> String? {
        source.close()
        let monitor = DeviceMonitor(subsystems: ["video4linux"])
        while !StopSignal.isRequested {
            if let monitor {
                for event in monitor.events(timeout: 1) where event.action == "add" {
                    logger.notice("udev: \(event.subsystem) add \(event.path ?? "?")")
                }
            } else {
                sleep(1)
            }
            if let camera = try? reopenSource() {
                source = camera
                source.keepsColour = keepsColour
                logger.notice("camera \(path) is back")
                return path
            }
        }
        logger.notice("stopped while waiting for the camera \(path)")
        return nil
    }

    func close() { source.close() }
}
