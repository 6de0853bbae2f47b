import FoundationEssentials
import Glibc
import Serial
import TurretLinks
import Video
import TextOutput

/// Prints the HUD on stderr: rewritten in place on a terminal, one line per
/// change of the HUD or the link's state otherwise (logs stay readable).
final class StatusPrinter: FrameObserver {
    /// The link, for its state while the camera is away (no frame tells it then).
    private let output: any CommandOutput
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastShown = ""
    private var rate = FrameRateMeter()

    init(output: any CommandOutput) { self.output = output }

    func didProcess(_ outcome: FrameOutcome) {
        update(
            hud: StatusLine.hud(for: outcome),
            link: outcome.link)
    }

    func cameraLost(_ error: VideoError, lost: CameraLossEvent?) {
        update(hud: "camera lost", link: output.state)
    }

    func loopFinished() {
        if isTerminal { StandardStream.writeError("\n") }
    }

    private func update(hud: String, link state: LinkState) {
        let fps = rate.tick()
        let line = StatusLine.line(hud: hud, framesPerSecond: fps, serial: state)
        let shown = hud + "\(state)"
        if isTerminal {
            StandardStream.writeError("\r\u{1B}[K" + line)
        } else if shown != lastShown {
            StandardStream.writeError(line + "\n")
        }
        lastShown = shown
    }
}
