import Foundation
import Scratch
import TestClips
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A system recorded for `sentry doctor --root`: Tests/Fixtures/doctor/base (a user `maker`
/// in dialout and video, this host's processor) copied to a scratch folder, then changed
/// as a case needs: groups, processes and what they hold, devices, udev rules, the
/// service's state as its `systemctl` and `journalctl` printed it (`ROOT/.commands/`).
final class RecordedSystem {
    let scratch: ScratchDirectory
    var root: String { scratch.file("root").path }
    private var bin: String { scratch.file("bin").path }

    init(_ label: String) throws {
        scratch = try ScratchDirectory("doctor-\(label)")
        let base = DemoClip.repository.appendingPathComponent("Tests/Fixtures/doctor/base").path
        try FileManager.default.copyItem(atPath: base, toPath: root)
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    }

    /// Writes `text` at `path` inside the recording.
    func write(_ text: String, at path: String) throws {
        let file = root + path
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
    }

    /// A device node, recorded as a file of `group` (dialout, as udev makes a USB serial port).
    func device(_ path: String, group: gid_t = 20) throws {
        try write("", at: path)
        try #require(chown(root + path, uid_t.max, group) == 0, "chown to group \(group) needs root or membership in it")
    }

    /// A process called `name` that holds `devices` open.
    func process(_ pid: Int, _ name: String, holding devices: [String] = []) throws {
        try write(name + "\n", at: "/proc/\(pid)/comm")
        try FileManager.default.createDirectory(atPath: root + "/proc/\(pid)/fd", withIntermediateDirectories: true)
        for (index, device) in devices.enumerated() {
            try FileManager.default.createSymbolicLink(atPath: root + "/proc/\(pid)/fd/\(index + 3)", withDestinationPath: device)
        }
    }

    /// The login's groups, as `/proc/self/status` records them.
    func loginGroups(_ groups: [Int]) throws {
        let status = try String(contentsOfFile: root + "/proc/self/status", encoding: .utf8)
        let lines = status.split(separator: "\n").map { $0.hasPrefix("Groups:") ? "Groups:\t" + groups.map(String.init).joined(separator: " ") : String($0) }
        try write(lines.joined(separator: "\n") + "\n", at: "/proc/self/status")
    }

    /// A program on the test's PATH that prints `output`.
    /// What the recorded machine's `name` printed (systemctl, journalctl), kept in the recording.
    func recorded(_ name: String, printing output: String) throws {
        try write(output + "\n", at: "/.commands/\(name)")
    }

    /// A command of this machine's, on PATH, that prints `output`.
    func command(_ name: String, printing output: String) throws {
        let path = bin + "/" + name
        try "#!/bin/sh\ncat <<'EOF'\n\(output)\nEOF\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
    }

    /// `sentry doctor --root` on the recording, with its commands first on PATH; the JSON's checks by name.
    func doctor(_ arguments: [String]) throws -> (status: Int32, checks: [String: (status: String, message: String, fix: String?)], run: SentryProcess) {
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let run = try SentryProcess(["doctor", "--root", root, "--json"] + arguments, environment: ["PATH": path, "XDG_CONFIG_HOME": scratch.file("config").path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput)")
        var checks: [String: (String, String, String?)] = [:]
        for check in try #require(object["checks"] as? [[String: Any]]) {
            checks[check["name"] as? String ?? ""] = (check["status"] as? String ?? "", check["message"] as? String ?? "", check["fix"] as? String)
        }
        return (run.status, checks, run)
    }
}

@Suite("sentry doctor on recorded systems: groups, processes, devices, the service, the processor, the settings file")
struct DoctorSystemTests {
    @Test("the recorded maker's system: in dialout and video, nothing in the way; exit 0")
    func healthy() throws {
        let system = try RecordedSystem("healthy")
        let (status, checks, run) = try system.doctor(["--serial", "sim"])
        #expect(checks["group dialout"]?.status == "ok" && checks["group video"]?.status == "ok", "\(run.standardOutput)")
        #expect(checks["ModemManager"]?.status == "ok" && checks["brltty"]?.status == "ok" && checks["service"]?.status == "ok")
        #expect(checks["processor"]?.status == "ok" && checks["processor"]?.message.contains("AVX2+FMA") == true)
        #expect(checks["udev rule"]?.status == "warning" && checks["cameras"]?.status == "warning")
        #expect(status == 0, "warnings alone exit 0: \(run.standardOutput)")
    }

    @Test("with no camera, the command doctor suggests runs as it is given (a photo, looped); --camera given a file is checked as a file")
    func noCamera() throws {
        let system = try RecordedSystem("healthy")
        let (_, checks, run) = try system.doctor(["--serial", "sim"])
        let fix = try #require(checks["cameras"]?.fix, "\(run.standardOutput)")
        let suggested = try #require(fix.firstMatch(of: #/sentry (--camera photo\.jpg .*)$/#)?.1, "\(fix)")
        let photo = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut-colour.jpg").path
        let arguments = suggested.split(separator: " ").map { $0 == "photo.jpg" ? photo : String($0) } + ["--frames", "20", "--quiet"]
        let suggestedRun = try SentryProcess(arguments)
        #expect(suggestedRun.status == 0 && suggestedRun.standardOutput.contains("20 frames"), "\(arguments): \(suggestedRun.standardError)")
        let (fileStatus, fileChecks, _) = try system.doctor(["--serial", "sim", "--camera", photo])
        #expect(fileChecks["camera \(photo)"]?.status == "ok" && fileStatus == 0)
        let (missingStatus, missingChecks, _) = try system.doctor(["--serial", "sim", "--camera", "demo"])
        #expect(missingChecks["camera demo"]?.status == "problem" && missingStatus == 1)
    }

    @Test("a user without dialout is told to join it, for the group and for the port; one added since this login began, to log in again")
    func groups() throws {
        let outside = try RecordedSystem("no-dialout")
        try outside.write("root:x:0:\ndialout:x:20:\nvideo:x:44:maker\nmaker:x:1000:\n", at: "/etc/group")
        try outside.loginGroups([44, 1000])
        try outside.device("/dev/ttyACM0")
        let (status, checks, _) = try outside.doctor(["--serial", "/dev/ttyACM0"])
        #expect(checks["serial port /dev/ttyACM0"]?.message == "maker may not open it (it belongs to group dialout, which maker is not in)")
        #expect(status == 1)
        #expect(checks["group dialout"]?.status == "problem" && checks["group dialout"]?.message.contains("maker is not in it") == true)
        #expect(checks["group dialout"]?.fix == "sudo usermod -aG dialout maker, then log out and in again")
        #expect(checks["group video"]?.status == "ok")

        let added = try RecordedSystem("relogin")
        try added.loginGroups([44, 1000])
        let relogin = try added.doctor(["--serial", "sim"])
        #expect(relogin.status == 1)
        #expect(relogin.checks["group dialout"]?.message.contains("added to it after this login began") == true)
        #expect(relogin.checks["group dialout"]?.fix?.hasPrefix("log out and in again") == true)
    }

    @Test("ModemManager running without sentry's udev rule is a problem; with the rule it is fine")
    func modemManager() throws {
        let system = try RecordedSystem("modemmanager")
        try system.process(812, "ModemManager")
        let without = try system.doctor(["--serial", "sim"])
        #expect(without.status == 1 && without.checks["ModemManager"]?.status == "problem")
        #expect(without.checks["ModemManager"]?.fix?.contains("systemctl disable --now ModemManager") == true)
        try system.write("# sentry's rule\n", at: "/lib/udev/rules.d/60-sentry-turret.rules")
        let with = try system.doctor(["--serial", "sim"])
        #expect(with.checks["ModemManager"]?.status == "ok" && with.checks["udev rule"]?.status == "ok", "\(with.run.standardOutput)")
    }

    @Test("brltty holding a CH340's port: the port is in use by brltty, and brltty is named with what it holds")
    func brltty() throws {
        let system = try RecordedSystem("brltty")
        try system.device("/dev/ttyUSB0")
        try system.process(733, "brltty", holding: ["/dev/ttyUSB0"])
        let (status, checks, run) = try system.doctor(["--serial", "/dev/ttyUSB0"])
        #expect(status == 1)
        #expect(checks["serial port /dev/ttyUSB0"]?.message == "in use by brltty (pid 733)", "\(run.standardOutput)")
        #expect(checks["brltty"]?.message.hasPrefix("running and holding /dev/ttyUSB0") == true && checks["brltty"]?.fix?.contains("apt remove brltty") == true)
    }

    @Test("a busy port names its holder; a free one is present; a missing one is not found")
    func busyPort() throws {
        let system = try RecordedSystem("busy")
        try system.device("/dev/ttyACM0")
        try system.device("/dev/ttyACM1")
        try system.process(4242, "screen", holding: ["/dev/pts/3", "/dev/ttyACM0"])
        #expect(try system.doctor(["--serial", "/dev/ttyACM0"]).checks["serial port /dev/ttyACM0"]?.message == "in use by screen (pid 4242)")
        #expect(try system.doctor(["--serial", "/dev/ttyACM1"]).checks["serial port /dev/ttyACM1"]?.status == "ok")
        let missing = try system.doctor(["--serial", "/dev/ttyACM7"])
        #expect(missing.status == 1 && missing.checks["serial port /dev/ttyACM7"]?.message == "not found")
    }

    @Test("a service that failed: its state, its exit status, its restarts and the journal's last line; a running one is fine; all from the recording, never this machine's")
    func service() throws {
        let system = try RecordedSystem("service")
        try system.write("[Unit]\nDescription=sentry\n", at: "/lib/systemd/system/sentry.service")
        // This machine's systemctl speaks of this machine's service: a recording's state is its own, or unknown.
        try system.command("systemctl", printing: "UnitFileState=enabled\nActiveState=failed\nSubState=failed\nResult=exit-code\nExecMainStatus=1\nNRestarts=5")
        let unrecorded = try system.doctor(["--serial", "sim"]).checks["service sentry"]
        #expect(unrecorded?.status == "ok" && unrecorded?.message.hasPrefix("installed (") == true && unrecorded?.message.contains("not in the recording") == true, "\(String(describing: unrecorded))")
        try system.recorded("systemctl", printing: "UnitFileState=enabled\nActiveState=failed\nSubState=failed\nResult=exit-code\nExecMainStatus=1\nNRestarts=5")
        try system.recorded("journalctl", printing: "sentry: serial port /dev/sentry-turret: not found; plug the board in")
        let failed = try system.doctor(["--serial", "sim"])
        #expect(failed.status == 1)
        #expect(
            failed.checks["service sentry"]?.message
                == "failed (exit-code, exit status 1, 5 restarts): sentry: serial port /dev/sentry-turret: not found; plug the board in",
            "\(failed.run.standardOutput)")
        #expect(failed.checks["service sentry"]?.fix?.hasPrefix("journalctl -u sentry") == true)
        try system.recorded("systemctl", printing: "UnitFileState=enabled\nActiveState=active\nSubState=running\nResult=success\nExecMainStatus=0\nNRestarts=0")
        #expect(try system.doctor(["--serial", "sim"]).checks["service sentry"].map { $0.status == "ok" && $0.message == "enabled, running" } == true)
        try system.recorded("systemctl", printing: "UnitFileState=enabled\nActiveState=inactive\nSubState=dead\nResult=success\nExecMainStatus=0\nNRestarts=0")
        #expect(try system.doctor(["--serial", "sim"]).checks["service sentry"]?.status == "warning")
    }

    @Test("a processor without AVX2 is a warning naming the fallback; an ARM one with NEON is fine")
    func processor() throws {
        let old = try RecordedSystem("old-cpu")
        try old.write("processor\t: 0\nmodel name\t: Intel(R) Core(TM)2 Duo CPU E8400\nflags\t\t: fpu sse sse2 ssse3 sse4_1\n", at: "/proc/cpuinfo")
        let checks = try old.doctor(["--serial", "sim"]).checks
        #expect(checks["processor"]?.status == "warning" && checks["processor"]?.message.contains("Haar cascade") == true)
        let pi = try RecordedSystem("arm")
        try pi.write("processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU part\t: 0xd08\n", at: "/proc/cpuinfo")
        #expect(try pi.doctor(["--serial", "sim"]).checks["processor"]?.message.contains("NEON") == true)
    }

    @Test("a settings file with an unknown key, or a value its flag refuses, is named with its line; a good one is counted")
    func settings() throws {
        let system = try RecordedSystem("settings")
        let unknown = try system.scratch.write("offset = 40\nbogus = 1\n", to: "unknown.toml")
        let badKey = try system.doctor(["--serial", "sim", "--config", unknown])
        #expect(badKey.status == 1)
        #expect(badKey.checks["settings file"]?.message.hasPrefix("config \(unknown):2: bogus:") == true, "\(badKey.run.standardOutput)")
        let range = try system.scratch.write("# the turret\ntilt = true\noffset = 400\n", to: "range.toml")
        let badValue = try system.doctor(["--serial", "sim", "--config", range])
        #expect(badValue.checks["settings file"]?.message.hasPrefix("config \(range):3: offset:") == true, "\(badValue.run.standardOutput)")
        let good = try system.scratch.write("offset = 40\ntilt = true\n", to: "good.toml")
        #expect(try system.doctor(["--serial", "sim", "--config", good]).checks["settings file"]?.message == "\(good): 2 settings, each a flag's name with a value it takes")
        // Without --config, the recording's own file where sentry looks for it (the system's), not this machine's.
        #expect(try system.doctor(["--serial", "sim"]).checks["settings file"]?.message.hasPrefix("none (\(system.root)") == true)
        try system.write("offset = 40\nbogus = 1\n", at: "/etc/sentry/sentry.toml")
        let recorded = try system.doctor(["--serial", "sim"])
        #expect(recorded.checks["settings file"]?.message.hasPrefix("config \(system.root)/etc/sentry/sentry.toml:2: bogus:") == true, "\(recorded.run.standardOutput)")
    }

    @Test("a camera that is not a camera is a problem: /dev/null, a folder; exit 1")
    func notACamera() throws {
        let null = try SentryProcess(["doctor", "--serial", "sim", "--camera", "/dev/null"])
        #expect(null.status == 1 && null.standardOutput.contains("FIX  camera /dev/null: not a V4L2 video device"), "\(null.standardOutput)")
        let folder = try SentryProcess(["doctor", "--serial", "sim", "--camera", "/tmp"])
        #expect(folder.status == 1 && folder.standardOutput.contains("FIX  camera /tmp: not a camera but a folder"))
        let bad = try SentryProcess(["doctor", "--root", "/nonexistent-recording"])
        #expect(bad.status == 64 && bad.standardError.contains("--root /nonexistent-recording is not a folder"), "\(bad.standardError)")
    }
}
