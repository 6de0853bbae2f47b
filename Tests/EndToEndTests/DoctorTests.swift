import Foundation
import Serial
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("sentry doctor: the board's port and the Linux pitfalls, each with its fix")
struct DoctorTests {
    /// A board on a pseudo-terminal that has printed `text` since it booted.
    static func board(printing text: String) throws -> PseudoTerminal {
        let pty = try PseudoTerminal()
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(pty.controller!.rawValue, $0.baseAddress, $0.count) }
        return pty
    }

    static func line(_ run: SentryProcess, about port: String, _ verdict: String) -> String? {
        run.standardOutput.split(separator: "\n").map(String.init).first { $0.hasPrefix("\(verdict)  serial port \(port):") }
    }

    @Test("a board that says READY: the port opens and the sketch answers")
    func answering() throws {
        let pty = try Self.board(printing: "READY\r\n")
        let run = try SentryProcess(["doctor", "--serial", pty.devicePath, "--wait", "2"])
        #expect(run.standardOutput.contains("ok   serial port \(pty.devicePath): the sentry sketch answers (READY)"), "\(run.standardOutput)")
        #expect(Self.line(run, about: pty.devicePath, "FIX") == nil, "\(run.standardOutput)")
        #expect(run.standardOutput.contains("ok   model face_landmark.tflite"))
    }

    @Test("another sketch, a silent board, a missing port: each a FIX line with the fix, and exit 1")
    func problems() throws {
        let other = try Self.board(printing: "Hello from Blink\r\n")
        let chatty = try SentryProcess(["doctor", "--serial", other.devicePath, "--wait", "1"])
        #expect(chatty.status == 1)
        let wrong = try #require(Self.line(chatty, about: other.devicePath, "FIX"), "\(chatty.standardOutput)")
        #expect(wrong.contains("prints \"Hello from Blink") && wrong.contains("sentry flash \(other.devicePath)"), "\(wrong)")

        let silent = try Self.board(printing: "")
        let quiet = try SentryProcess(["doctor", "--serial", silent.devicePath, "--wait", "0.5"])
        #expect(Self.line(quiet, about: silent.devicePath, "FIX")?.contains("no READY within 0.5 s") == true, "\(quiet.standardOutput)")

        let missing = try SentryProcess(["doctor", "--serial", "/dev/ttyACM97"])
        #expect(missing.status == 1)
        #expect(Self.line(missing, about: "/dev/ttyACM97", "FIX")?.contains("not found; plug the board in") == true, "\(missing.standardOutput)")

        let sim = try SentryProcess(["doctor", "--serial", "sim"])
        #expect(sim.standardOutput.hasPrefix("ok   serial port sim: the simulated servo needs no board"), "\(sim.standardOutput)")

        // --json: one object and nothing else on stdout, every check in it, the same exit.
        let json = try SentryProcess(["doctor", "--serial", "/dev/ttyACM97", "--json"])
        #expect(json.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any], "\(json.standardOutput)")
        let checks = try #require(object["checks"] as? [[String: Any]])
        let lines = missing.standardOutput.split(separator: "\n").dropLast()
        #expect(checks.count == lines.count, "\(checks.count) checks, \(lines.count) lines")
        let port = checks.first { $0["name"] as? String == "serial port /dev/ttyACM97" }
        #expect(port?["status"] as? String == "problem" && (port?["fix"] as? String)?.isEmpty == false, "\(port ?? [:])")
        #expect(checks.allSatisfy { ["ok", "warning", "problem"].contains($0["status"] as? String ?? "") && $0["message"] is String })
    }

    @Test("a port another program holds is named as in use")
    func busy() throws {
        let pty = try Self.board(printing: "READY\r\n")
        let holder = try SerialPort(path: pty.devicePath)
        defer { holder.close() }
        let run = try SentryProcess(["doctor", "--serial", pty.devicePath, "--wait", "1"])
        #expect(run.status == 1)
        #expect(Self.line(run, about: pty.devicePath, "FIX")?.contains("in use by another program") == true, "\(run.standardOutput)")
    }

    @Test("a user outside the port's group is told which group to join")
    func permission() throws {
        guard getuid() == 0 else { return }  // needs another user to be: CI runs as root
        let pty = try Self.board(printing: "READY\r\n")
        chown(pty.devicePath, 0, 20)  // root:dialout, as udev makes a USB serial port
        chmod(pty.devicePath, 0o660)
        let run = try SentryProcess(
            program: "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", SentryProcess.executable, "doctor", "--serial", pty.devicePath])
        let found = Self.line(run, about: pty.devicePath, "FIX") ?? ""
        #expect(found.contains("group dialout") && found.contains("sudo usermod -aG dialout nobody"), "\(run.standardOutput)")
    }
}
