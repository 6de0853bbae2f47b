import ArgumentParser
import Config
import Doctor
import FoundationEssentials
import MQTT
import SentryApp

/// `sentry doctor`: why the Arduino is not answering, with the fix for each reason.
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract:
            "Check the whole install, each with its fix: your groups, the board's serial port (in use? the sentry sketch?), the camera (a frame?), ModemManager and brltty, the settings file, the udev rule and the service, the processor, the models, and the MQTT broker when one is set.")

    @Option(help: "The board's serial port (default: every serial port found).")
    var serial: String?

    @Option(help: "The camera's device (default: every camera found).")
    var camera: String?

    @Option(help: "The settings file to check (default: the one sentry reads).")
    var config: String?

    @Option(help: ArgumentHelp("Check a system recorded under this folder (its /proc, /sys, /etc, /lib and /dev) instead of this one.", valueName: "folder"))
    var root: String?

    @OptionGroup var broker: BrokerFlags

    @Flag(help: "Print {\"checks\": [{\"name\", \"status\", \"message\", \"fix\"}]} and nothing else on stdout.")
    var json = false

    @Option(parsing: .unconditional, help: "Seconds to wait for the sketch's READY once the port is open (an Uno resets when it opens).")
    var wait: Double = 3

    func validate() throws {
        if let serial, serial.isEmpty { throw ValidationError("--serial needs a port, e.g. /dev/ttyACM0") }
        if let camera, camera.isEmpty { throw ValidationError("--camera needs a device, e.g. /dev/video0") }
        if let root {
            var isFolder = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isFolder), isFolder else {
                throw ValidationError("--root \(root) is not a folder; pass the folder a system was recorded in")
            }
        }
        try checkRange(wait, "wait", 0.1...60, " seconds")
    }

    /// Whether `--camera` names a video or photo (anything but a folder outside /dev), as `run` reads it.
    static func namesAFile(_ path: String) -> Bool {
        var isFolder = false
        return !path.hasPrefix("/dev/") && !(FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder)
    }

    /// `--camera` given a file, as `run` takes one: it needs no camera, only to be there.
    func fileFinding(_ path: String) -> Finding {
        FileManager.default.isReadableFile(atPath: path)
            ? Finding(.ok, "camera \(path)", "a video or a photo needs no camera; sentry run opens it as it is given")
            : Finding(.problem, "camera \(path)", "no such file, or not readable", fix: "pass a video or photo you can read, or a camera such as /dev/video0")
    }

    func run() throws {
        // `sim` is the documented simulated servo: no board to find, nothing to fix.
        let machine = Machine(root: root ?? "/")
        // A video or photo given as the camera is checked as a file, not as a device.
        let file = camera.flatMap { $0 != "auto" && Self.namesAFile($0) ? $0 : nil }
        let cameras: [String]? =
            switch camera {
            case nil: nil
            case "auto"?: []
            case _? where file != nil: []
            case let device?: [device]
            }
        var findings =
            serial == simulatedSerialName
            ? [Finding(.ok, "serial port sim", "the simulated servo needs no board; for a real one pass its port, e.g. --serial /dev/ttyACM0")]
                + Checkup.run(on: machine, ports: [], cameras: cameras, readyWait: wait)
            : Checkup.run(on: machine, ports: serial.map { [$0] }, cameras: cameras, readyWait: wait)
        if let file { findings.insert(fileFinding(file), at: 0) }
        let settingsPath = self.settingsPath
        findings.append(settingsFinding(settingsPath))
        if broker.mqtt != nil || settingsPath.flatMap({ SettingsFile.configuredValue("mqtt", config: $0) }) != nil {
            findings.append(brokerFinding(settingsPath))
        }
        let problems = findings.filter { $0.verdict == .problem }.count
        if json {
            print(Self.json(findings))
        } else {
            for finding in findings { print(finding.line) }
            print(problems == 0 ? "sentry doctor: all good" : "sentry doctor: \(problems) thing\(problems == 1 ? "" : "s") to fix")
        }
        if problems > 0 { throw ExitCode(1) }
    }

    /// The findings as `--json` prints them, for scripts and support requests.
    static func json(_ findings: [Finding]) -> String {
        struct Check: Encodable {
            var name: String
            var status: String
            var message: String
            var fix: String?
        }
        let checks = findings.map { Check(name: $0.subject, status: $0.verdict.rawValue, message: $0.text, fix: $0.fix) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(["checks": checks])).map { String(decoding: $0, as: UTF8.self) } ?? "{\"checks\": []}"
    }

    /// Where sentry looks for its settings: the user's file, then the system's;
    /// with `--root`, those places in the recording.
    private var settingsPlaces: [String] { [ConfigFile.userPath(), ConfigFile.systemPath].map { (root ?? "") + $0 } }

    /// The settings file doctor checks, if there is one.
    var settingsPath: String? {
        root == nil || config != nil ? ConfigFile.locate(explicit: config) : settingsPlaces.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The settings file: valid TOML, known keys, values the flags take; a bad one named with its line.
    func settingsFinding(_ path: String?) -> Finding {
        guard let path else {
            return Finding(.ok, "settings file", "none (\(settingsPlaces.joined(separator: " or "))): the defaults and the flags alone")
        }
        do {
            let merged = try SettingsFile.merge(["--config", path])
            let count = merged.file?.entries.count ?? 0
            return Finding(.ok, "settings file", "\(path): \(count) setting\(count == 1 ? "" : "s"), each a flag's name with a value it takes")
        } catch {
            return Finding(.problem, "settings file", error.description, fix: "edit that line (sentry config shows each setting and where it comes from)")
        }
    }

    /// The broker (`--mqtt`, else the settings file's): it answers and takes the login.
    func brokerFinding(_ settingsPath: String?) -> Finding {
        let subject = "MQTT broker \(broker.mqtt ?? settingsPath.flatMap { SettingsFile.configuredValue("mqtt", config: $0) } ?? "")"
        do {
            let options = try broker.visit(as: "sentry-doctor", config: settingsPath)
            do {
                let client = try BrokerVisit.connect(options) { _ in }
                client.stop()
                return Finding(.ok, subject, "answers and accepts \(options.username.map { "the user \($0)" } ?? "an anonymous login")")
            } catch {
                let reason = error.description.replacingPrefix("mqtt: broker \(options.host):\(options.port): ", with: "")
                let login = reason.contains("authorise") || reason.contains("password")
                return Finding(
                    .problem, subject, reason,
                    fix: login ? "fix the login as it says" : "start the broker, or point --mqtt at where it listens (mosquitto_sub -h HOST -p PORT -t '#' -C 1 answers when it is there)")
            }
        } catch {
            return Finding(.problem, subject, "\(error)", fix: "give --mqtt mqtt://[USER@]HOST[:PORT]")
        }
    }
}
