import ArgumentParser
import Doctor

/// `sentry doctor`: why the Arduino is not answering, with the fix for each reason.
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract:
            "Check the board's serial port and the usual Linux pitfalls (dialout, ModemManager, brltty, a port in use, the wrong sketch), each with its fix.")

    @Option(help: "The board's serial port (default: every serial port found).")
    var serial: String?

    @Option(parsing: .unconditional, help: "Seconds to wait for the sketch's READY once the port is open (an Uno resets when it opens).")
    var wait: Double = 3

    func validate() throws {
        if let serial, serial.isEmpty { throw ValidationError("--serial needs a port, e.g. /dev/ttyACM0") }
        try checkRange(wait, "wait", 0.1...60, " seconds")
    }

    func run() throws {
        let findings = Checkup.run(ports: serial.map { [$0] }, readyWait: wait)
        for finding in findings { print(finding.line) }
        let problems = findings.filter { $0.verdict == .problem }.count
        print(problems == 0 ? "sentry doctor: all good" : "sentry doctor: \(problems) thing\(problems == 1 ? "" : "s") to fix")
        if problems > 0 { throw ExitCode(1) }
    }
}
