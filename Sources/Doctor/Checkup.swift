#if canImport(Glibc)
    import Glibc
#endif
import Devices
import FoundationEssentials
import ModelFiles
import MonotonicTime
import Serial
import TextOutput
import Video

/// One thing `sentry doctor` looked at: what it found, and for a problem the fix.
public struct Finding: Sendable, Equatable {
    /// A problem stops sentry from working (exit 1); a warning may, or costs something, and says what.
    public enum Verdict: String, Sendable, Equatable {
        case ok, warning, problem
    }

    public var verdict: Verdict
    /// What was looked at: `serial port /dev/ttyACM0`, `ModemManager`…
    public var subject: String
    public var text: String
    public var fix: String?

    public init(_ verdict: Verdict, _ subject: String, _ text: String, fix: String? = nil) {
        (self.verdict, self.subject, self.text, self.fix) = (verdict, subject, text, fix)
    }

    /// `ok   subject: text`, `WARN subject: text; fix` or `FIX  subject: text; fix`.
    public var line: String {
        let mark = switch verdict {
        case .ok: "ok   "
        case .warning: "WARN "
        case .problem: "FIX  "
        }
        return mark + "\(subject): \(text)" + (fix.map { "; \($0)" } ?? "")
    }
}

/// The pitfalls every turret builder meets on Linux, checked one by one: the
/// user's groups, the board's port (there, readable and writable, not held by
/// another program, answering with the sentry sketch's `READY`), the camera
/// (a capture device sentry can read, delivering a frame), ModemManager probing
/// new ports with AT commands, brltty taking CH340 boards, sentry's udev rule and
/// service, the processor's vector units and the models. Each finding says what to do.
public enum Checkup {
    /// Every check on `machine`: `ports` (nil: each serial port found; empty: none, the simulated
    /// servo's case), waiting up to `readyWait` seconds for each board's `READY`; `cameras` (nil:
    /// each capture device found).
    public static func run(on machine: Machine = Machine(), ports: [String]?, cameras: [String]?, readyWait: Double) -> [Finding] {
        var findings = groups(on: machine)
        let found = ports ?? (machine.isLive ? DeviceList.serialPorts().map(\.path) : [])
        if found.isEmpty, ports == nil {
            findings.append(
                Finding(
                    .problem, "serial ports", "none found",
                    fix: "plug the Arduino in with a USB cable that carries data (some carry only power); sentry devices --watch 30 shows it arrive"))
        }
        for port in found { findings += check(port: port, on: machine, readyWait: readyWait) }
        let videos = cameras ?? (machine.isLive ? DeviceList.videoNodes().filter { V4L2Camera.describe($0) != nil } : [])
        if videos.isEmpty, cameras == nil {
            findings.append(
                Finding(.warning, "cameras", "none found", fix: "plug a USB camera in (sentry devices lists them); without one, sentry runs on a video or a photo: sentry --camera photo.jpg --loop --serial sim"))
        }
        for camera in videos { findings.append(check(camera: camera, on: machine)) }
        findings.append(modemManager(on: machine))
        findings.append(brltty(on: machine))
        findings.append(udevRule(on: machine))
        findings.append(service(on: machine))
        findings.append(processor(on: machine))
        findings += models()
        return findings
    }

    /// The port: there, permitted, free, and the sketch answering (on a recorded machine, up to free).
    public static func check(port path: String, on machine: Machine = Machine(), readyWait: Double) -> [Finding] {
        let subject = "serial port \(path)"
        guard machine.exists(path) else {
            return [Finding(.problem, subject, "not found", fix: "plug the board in; sentry devices lists the serial ports there are")]
        }
        if let refusal = permission(for: path, subject: subject, on: machine) { return [refusal] }
        // A pseudo-terminal's device side is always held by the program that made it (a
        // simulator): there only the lock that SerialPort takes tells a second user.
        let holders = path.hasPrefix("/dev/pts/") ? [] : machine.holders(of: path)
        guard holders.isEmpty else {
            return [
                Finding(
                    .problem, subject, "in use by " + holders.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", "),
                    fix: "stop that program (a serial monitor, another sentry, ModemManager, brltty) and try again")
            ]
        }
        guard machine.isLive else { return [Finding(.ok, subject, "present and free (a recorded system: not opened)")] }
        let port: SerialPort
        do {
            port = try SerialPort(path: path)
        } catch {
            return [Finding(.problem, subject, error.reason, fix: error.hint)]
        }
        defer { port.close() }
        return [Finding(.ok, subject, "opened at 9600 baud")] + [sketch(on: port, subject: subject, wait: readyWait)]
    }

    /// A device the user may not open: which group to join (or, joined already, to log in again).
    static func permission(for device: String, subject: String, on machine: Machine) -> Finding? {
        if machine.isLive {
            guard access(device, R_OK | W_OK) != 0 else { return nil }
        } else {
            guard let identity = machine.identity, identity.uid != 0, let name = machine.owningGroup(of: device),
                let group = machine.group(named: name), !identity.groups.contains(group.gid), identity.gid != group.gid
            else { return nil }
        }
        let group = machine.owningGroup(of: device) ?? "its group"
        let user = machine.identity.flatMap { machine.userName($0.uid) } ?? "you"
        return Finding(
            .problem, subject, "\(user) may not open it (it belongs to group \(group), which \(user) is not in)",
            fix: "sudo usermod -aG \(group) \(user), then log out and in again (the service user sentry is in it already)")
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
    static func modemManager(on machine: Machine) -> Finding {
        guard !machine.processes(named: "ModemManager").isEmpty else { return Finding(.ok, "ModemManager", "not running") }
        if udevRuleInstalled(on: machine) {
            return Finding(.ok, "ModemManager", "running, and sentry's udev rule tells it to leave the boards alone")
        }
        return Finding(
            .problem, "ModemManager", "running: it probes new serial ports with AT commands, which reach the sketch",
            fix: "install sentry's udev rule (make install, or the package), or: sudo systemctl disable --now ModemManager")
    }

    /// brltty (Ubuntu) claims CH340 boards (1a86:7523), the usual Arduino clones, as braille displays.
    static func brltty(on machine: Machine) -> Finding {
        let running = machine.processes(named: "brltty")
        guard !running.isEmpty else { return Finding(.ok, "brltty", "not running") }
        let held = running.flatMap { pid in machine.heldDevices(of: pid).filter { $0.hasPrefix("/dev/tty") } }
        return Finding(
            .problem, "brltty", "running" + (held.isEmpty ? "" : " and holding \(held.joined(separator: ", "))")
                + ": it takes CH340 boards (1a86:7523) as braille displays, and their port vanishes",
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
}
