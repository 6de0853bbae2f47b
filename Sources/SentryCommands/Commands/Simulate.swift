import ArgumentParser
import FoundationEssentials
import MonotonicTime
import SentryApp
import ServoSim
import TextOutput

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the simulated servo on a pseudo-terminal and show its angles.",
        discussion: "Prints the pty path; point sentry (or any serial program) at it with --serial PATH."
    )

    @Option(parsing: .unconditional, help: "Stop after this many seconds (default: until Ctrl-C).")
    var duration: Double?

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration \(duration) must be a positive number of seconds")
        }
    }

    func run() throws {
        let servo = try failingCleanly { try SimulatedServo() }
        defer { servo.stop() }
        StandardStream.writeOutput("simulated servo on \(servo.devicePath)\ntry: sentry --camera CLIP --serial \(servo.devicePath)\n")
        StopSignal.install()
        let start = monotonicSeconds()
        var last: (Int, Int, Bool, Int)?
        while !StopSignal.isRequested, duration.map({ monotonicSeconds() - start < $0 }) ?? true {
            let s = servo.current
            if last.map({ $0 != (s.pan, s.tilt, s.isScanning, s.shots) }) ?? true {
                let fired = last.map { s.shots > $0.3 } ?? false
                let line =
                    String(printf: "%8.3fs  pan %3d  tilt %3d", s.time, s.pan, s.tilt) + (s.isScanning ? "  scanning" : "")
                    + (fired ? "  FIRE (shot \(s.shots))" : "")
                StandardStream.writeOutput(line + "\n")
                last = (s.pan, s.tilt, s.isScanning, s.shots)
            }
            StopSignal.wait(timeout: 0.005)  // the next look at the servo, 200 a second
        }
    }
}
