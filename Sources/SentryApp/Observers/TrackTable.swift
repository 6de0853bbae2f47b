import FoundationEssentials
import Glibc
import Geometry
import Serial
import ServoSim
import TurretLinks
import TurretProtocol
import TextOutput

/// `--track`: one line on stdout per frame that wrote commands, with where
/// the simulated servo stands once it has read them.
final class TrackTable: FrameObserver {
    private let output: any CommandOutput
    private let simulator: SimulatedServo?

    init(output: any CommandOutput, simulator: SimulatedServo?) {
        self.output = output
        self.simulator = simulator
    }

    func didProcess(_ outcome: FrameOutcome) {
        guard !outcome.result.commands.isEmpty else { return }
        simulator?.waitForBytes(output.bytesWritten, timeout: 0.2)
        print(Self.line(outcome.result, servo: simulator?.current))
        // Each line as it happens, into a pipe or a file too (`tail -f`, a test waiting for
        // it): fflush(nil) flushes stdout, which Swift 6 will not name from a non-isolated place.
        fflush(nil)
    }

    static func line(_ result: FrameResult, servo: SimulatedServo.Sample?) -> String {
        let time = String(printf: "%6.2fs", result.timestamp)
        let target =
            result.target.map { box in
                let c = box.center
                return String(printf: "face at (%3.0f,%3.0f)", c.x, c.y)
            } ?? "no face          "
        let sent = result.commands.map(\.description).joined(separator: " ")
        let servoText = servo.map { " servo pan \($0.pan)" + ($0.isScanning ? " (scanning)" : "") } ?? ""
        return "\(time)  \(target)  sent \(sent.padded(to: 10))\(servoText)"
    }
}
