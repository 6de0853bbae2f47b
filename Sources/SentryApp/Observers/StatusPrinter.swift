import FoundationEssentials
import Glibc
import Serial
import TurretLinks
import Video
import TextOutput

/// Prints the HUD on stderr: rewritten in place on a terminal, one line per
/// change of the HUD or the link's state otherwise (logs stay readable).
final class StatusPrinter: FrameObserver {
    private let output: any CommandOutput
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastShown = ""
    private var rate = FrameRateMeter()

    init(output: any CommandOutput) { self.output = output }

    func didProcess(_ context: FrameContext) {
        let result = context.result, pipeline = context.pipeline
        update(
            hud: StatusLine.hud(
                for: result.aim, locked: result.isLocked, tiltEnabled: pipeline.settings.tiltEnabled,
                steering: pipeline.steering, spared: result.spared))
    }

    func cameraLost(_ error: VideoError, lockEvent: LockEventContext?) {
        update(hud: "camera lost")
    }

    func loopFinished() {
        if isTerminal { StandardStream.writeError("\n") }
    }

    private func update(hud: String) {
        let fps = rate.tick(), state = output.state
        let line = StatusLine.line(hud: hud, framesPerSecond: fps, serial: state)
        // The link's state is read once: the line printed is the one compared next time.
        let shown = hud + "\(state)"
        if isTerminal {
            StandardStream.writeError("\r\u{1B}[K" + line)
        } else if shown != lastShown {
            StandardStream.writeError(line + "\n")
        }
        lastShown = shown
    }
}
