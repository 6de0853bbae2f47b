#if canImport(Glibc)
    import Glibc
#endif
import Devices
import FoundationEssentials
import ModelFiles
import MonotonicTime
import Serial
import TextOutput

/// One thing `sentry doctor` looked at: what it found, and for a problem the fix.
public struct Finding: Sendable, Equatable {
    public enum Verdict: Sendable, Equatable {
        case ok, problem
    }

    public var verdict: Verdict
    /// What was looked at: `serial port /dev/ttyACM0`, `ModemManager`…
    public var subject: String
    public var text: String
    public var fix: String?

    public init(_ verdict: Verdict, _ subject: String, _ text: String, fix: String? = nil) {
        (self.verdict, self.subject, self.text, self.fix) = (verdict, subject, text, fix)
    }

    /// `ok   subject: text` or `FIX  subject: text; fix`.
    public var line: String {
        (verdict == .ok ? "ok   " : "FIX  ") + "\(subject): \(text)" + (fix.map { "; \($0)" } ?? "")
    }
}

/// The pitfalls every turret builder meets on Linux, checked one by one: the
/// board's port (there, readable and writable, not held by another program,
/// answering with the sentry sketch's `READY`), the `dialout` group,
/// ModemManager probing new ports with AT commands, brltty taking CH340 boards,
/// and the models. Each finding says what to do.
public enum Checkup {
    /// Every check: `ports` (nil: each serial port found; empty: none, the simulated servo's case), waiting up to
    /// `readyWait` seconds for each board's `READY`.
    public static func run(ports: [String]?, readyWait: Double) -> [Finding] {
        var findings: [Finding] = []
        let found = ports ?? DeviceList.serialPorts().map(\.path)
        if found.isEmpty, ports == nil {
            findings.append(
                Finding(
                    .problem, "serial ports", "none found",
                    fix: "plug the Arduino in with a USB cable that carries data (some carry only power); sentry devices --watch 30 shows it arrive"))
        }
        for port in found { findings += check(port: port, readyWait: readyWait) }
        findings.append(modemManager())
        findings.append(brltty())
        findings += models()
        return findings
    }

    /// The port: there, permitted, free, and the sketch answering.
    public static func check(port path: String, readyWait: Double) -> [Finding] {
        let subject = "serial port \(path)"
        var info = stat()
        guard stat(path, &info) == 0 else {
            return [Finding(.problem, subject, "not found", fix: "plug the board in; sentry devices lists the serial ports there are")]
        }
        guard access(path, R_OK | W_OK) == 0 else {
            let group = getgrgid(info.st_gid).map { String(cString: $0.pointee.gr_name) } ?? "gid \(info.st_gid)"
            let user = getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } ?? "you"
            return [
                Finding(
                    .problem, subject, "\(user) may not open it (it belongs to group \(group), which \(user) is not in)",
                    fix: "sudo usermod -aG \(group) \(user), then log out and in again (the service user sentry is in it already)")
            ]
        }
        // A pseudo-terminal's device side is always held by the program that made it (a
        // simulator): there only the lock that SerialPort takes tells a second user.
        let holders = path.hasPrefix("/dev/pts/") ? [] : processes(holding: path)
        guard holders.isEmpty else {
            return [
                Finding(
                    .problem, subject, "in use by " + holders.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", "),
                    fix: "stop that program (a serial monitor, another sentry, ModemManager) and try again")
            ]
        }
        let port: SerialPort
        do {
            port = try SerialPort(path: path)
        } catch {
            return [Finding(.problem, subject, error.reason, fix: error.hint)]
        }
        defer { port.close() }
        return [Finding(.ok, subject, "opened at 9600 baud")] + [sketch(on: port, subject: subject, wait: readyWait)]
    }

    /// The sentry sketch prints `READY` once it has booted (an Uno resets when its port opens).
    static func sketch(on port: SerialPort, subject: String, wait: Double) -> Finding {
        var received: [UInt8] = []
        let deadline = monotonicSeconds() + wait
        while monotonicSeconds() < deadline {
            port.wait(until: .readable, timeout: deadline - monotonicSeconds())
            guard let bytes = try? port.read() else { break }
            // Readable with nothing to read: the other end hung up (a pty); look again shortly.
            if bytes.isEmpty { usleep(20_000) }
            received += bytes
            let lines = String(decoding: received, as: UTF8.self).split(whereSeparator: \.isNewline)
            if lines.contains(where: { $0.trimmed() == "READY" }) {
                return Finding(.ok, subject, "the sentry sketch answers (READY)")
            }
            if received.count > 256 { break }
        }
        let flash = "flash the sentry sketch: sentry flash \(port.path)"
        guard received.isEmpty else {
            let shown = String(decoding: received.prefix(40), as: UTF8.self).replacing("\r", with: "\\r")
                .replacing("\n", with: "\\n")
            return Finding(.problem, subject, "the board prints \"\(shown)\", not the sentry sketch's READY", fix: flash)
        }
        return Finding(
            .problem, subject, "no READY within \(String(printf: "%g", wait)) s",
            fix: flash + " (a board that does not reset when its port opens says READY only after its reset button)")
    }

    /// ModemManager sends AT commands to every new serial port for half a minute, which
    /// the sketch reads as garbage: sentry's udev rule tells it to leave the boards alone.
    static func modemManager() -> Finding {
        guard !processes(named: "ModemManager").isEmpty else { return Finding(.ok, "ModemManager", "not running") }
        let rule = ["/etc/udev/rules.d/60-sentry-turret.rules", "/lib/udev/rules.d/60-sentry-turret.rules", "/usr/lib/udev/rules.d/60-sentry-turret.rules"]
        if rule.contains(where: { FileManager.default.fileExists(atPath: $0) }) {
            return Finding(.ok, "ModemManager", "running, and sentry's udev rule tells it to leave the boards alone")
        }
        return Finding(
            .problem, "ModemManager", "running: it probes new serial ports with AT commands, which reach the sketch",
            fix: "install sentry's udev rule (make install, or the package), or: sudo systemctl disable --now ModemManager")
    }

    /// brltty (Ubuntu) claims CH340 boards (1a86:7523), the usual Arduino clones, as braille displays.
    static func brltty() -> Finding {
        guard !processes(named: "brltty").isEmpty else { return Finding(.ok, "brltty", "not running") }
        return Finding(
            .problem, "brltty", "running: it takes CH340 boards (1a86:7523) as braille displays, and their port vanishes",
            fix: "sudo apt remove brltty (unless you use a braille display)")
    }

    /// The BlazeFace and face mesh models, where sentry looks for them.
    static func models() -> [Finding] {
        let whereToPut = "make install (or the package) puts them in share/sentry/models; in a checkout tools/setup; or set SENTRY_DATA_DIR"
        return ModelFile.allCases.sorted { $0.rawValue < $1.rawValue }.map { model in
            let name = model.rawValue
            return ModelLocator.file(model).map { Finding(.ok, "model \(name)", $0) }
                ?? Finding(.problem, "model \(name)", "not found in \(ModelLocator.searchDirectories().joined(separator: ", "))", fix: whereToPut)
        }
    }

    /// Processes whose name (`/proc/PID/comm`) is `name`.
    static func processes(named name: String) -> [Int32] {
        allProcesses().filter { processName($0) == name }
    }

    /// Other processes with `path` open, as far as /proc shows them (all of them to root).
    static func processes(holding path: String) -> [(pid: Int32, name: String)] {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return allProcesses().filter { $0 != getpid() }.compactMap { pid in
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return nil }
            let holds = descriptors.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == target }
            return holds ? (pid, processName(pid) ?? "?") : nil
        }
    }

    private static func allProcesses() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
    }

    private static func processName(_ pid: Int32) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmed()
    }
}
