#if canImport(Glibc)
    import Glibc
#endif
import ChildProcesses
import FoundationEssentials
import ProcessorFeatures
import SystemPackage
import TextOutput
import Video

extension Checkup {
    /// `dialout` opens the board's port and `video` the camera: the user in each, and in this
    /// login's groups too (a user added to a group has it only from the next login).
    static func groups(on machine: Machine) -> [Finding] {
        guard let identity = machine.identity else { return [] }
        let user = machine.userName(identity.uid) ?? "uid \(identity.uid)"
        guard identity.uid != 0 else { return [Finding(.ok, "groups", "\(user): every device opens to root")] }
        return [("dialout", "the board's serial port"), ("video", "the camera")].compactMap { name, opens in
            guard let group = machine.group(named: name) else { return nil }
            let subject = "group \(name)"
            if identity.groups.contains(group.gid) || identity.gid == group.gid { return Finding(.ok, subject, "\(user) is in it (\(opens))") }
            if group.members.contains(user) {
                return Finding(
                    .problem, subject, "\(user) was added to it after this login began, so \(opens) does not open yet",
                    fix: "log out and in again (or reboot); in one shell, newgrp \(name) starts a shell with it")
            }
            return Finding(.problem, subject, "\(user) is not in it, so \(opens) does not open", fix: "sudo usermod -aG \(name) \(user), then log out and in again")
        }
    }

    /// A camera sentry can use: a capture device, permitted, offering a format sentry reads, and delivering a frame.
    static func check(camera path: String, on machine: Machine) -> Finding {
        let subject = "camera \(path)"
        var info = stat()
        guard stat(machine.path(path), &info) == 0 else {
            return Finding(.problem, subject, "not found", fix: "plug the camera in; sentry devices lists the cameras there are")
        }
        if info.st_mode & S_IFMT == S_IFREG {
            return Finding(
                .warning, subject, "a file, not a camera: sentry plays it as a video, if ffmpeg reads it",
                fix: "for a camera, pass its device, e.g. --camera /dev/video0 (sentry devices lists them)")
        }
        guard info.st_mode & S_IFMT == S_IFCHR else {
            return Finding(.problem, subject, "not a camera but a folder", fix: "pass a camera's device, e.g. --camera /dev/video0 (sentry devices lists them)")
        }
        if let refusal = permission(for: path, subject: subject, on: machine) { return refusal }
        guard machine.isLive else { return Finding(.ok, subject, "a device sentry may open (a recorded system: not streamed)") }
        do throws(VideoError) {
            let camera = try V4L2Camera(path: path)
            defer { camera.close() }
            guard try camera.nextFrame() != nil else { throw VideoError(source: path, reason: "ended before its first frame", hint: "plug it in again") }
            return Finding(
                .ok, subject, "\(camera.name): \(camera.width)x\(camera.height) \(camera.fourcc) at \(String(printf: "%g", camera.framesPerSecond)) fps, a frame captured")
        } catch {
            return Finding(.problem, subject, error.reason, fix: error.hint)
        }
    }

    static let udevRuleFolders = ["/etc/udev/rules.d", "/lib/udev/rules.d", "/usr/lib/udev/rules.d"]

    static func udevRuleInstalled(on machine: Machine) -> Bool {
        udevRuleFolders.contains { machine.exists("\($0)/60-sentry-turret.rules") }
    }

    /// The udev rule names the board /dev/sentry-turret and keeps ModemManager off it.
    static func udevRule(on machine: Machine) -> Finding {
        if let folder = udevRuleFolders.first(where: { machine.exists("\($0)/60-sentry-turret.rules") }) {
            return Finding(.ok, "udev rule", "\(folder)/60-sentry-turret.rules (the board is /dev/sentry-turret, and ModemManager leaves it alone)")
        }
        return Finding(
            .warning, "udev rule", "not installed: the board has no stable name (/dev/sentry-turret), and ModemManager may probe it",
            fix: "make install, or the Debian package, installs it")
    }

    /// sentry's service, when installed: enabled, running, or how it last failed (from systemd and its journal).
    static func service(on machine: Machine) -> Finding {
        let folders = ["/etc/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"]
        guard let unit = folders.map({ "\($0)/sentry.service" }).first(where: machine.exists) else {
            return Finding(.ok, "service", "not installed (sentry runs from a terminal)")
        }
        let subject = "service sentry"
        guard let shown = machine.output(of: "systemctl", ["show", "sentry.service", "--no-pager", "--property=UnitFileState,ActiveState,SubState,Result,ExecMainStatus,NRestarts"])
        else {
            guard machine.isLive else { return Finding(.ok, subject, "installed (\(unit)); its state is not in the recording: run sentry doctor on that machine") }
            return Finding(.warning, subject, "\(unit) is installed, but systemctl does not answer", fix: "on a machine without systemd, start sentry by hand")
        }
        var state: [String: String] = [:]
        for line in shown.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { state[parts[0]] = parts[1] }
        }
        let enabled = state["UnitFileState"] ?? "unknown"
        let active = state["ActiveState"] ?? "unknown"
        let restarts = Int(state["NRestarts"] ?? "") ?? 0
        let result = state["Result"] ?? "success"
        if active == "failed" || result != "success" || (active == "activating" && restarts > 0) {
            let status = state["ExecMainStatus"].map { $0 == "0" ? "" : ", exit status \($0)" } ?? ""
            let last = machine.output(of: "journalctl", ["-u", "sentry.service", "-n", "1", "-o", "cat", "--no-pager", "-q"])?.trimmed()
            return Finding(
                .problem, subject, "\(active) (\(result)\(status)\(restarts > 0 ? ", \(restarts) restarts" : ""))" + (last.map { $0.isEmpty ? "" : ": \($0)" } ?? ""),
                fix: "journalctl -u sentry -n 50 says why; once fixed, sudo systemctl restart sentry")
        }
        if active == "active" { return Finding(.ok, subject, "\(enabled), running") }
        if enabled == "enabled" { return Finding(.warning, subject, "enabled but \(active)", fix: "sudo systemctl start sentry") }
        return Finding(.ok, subject, "installed, \(enabled) (sudo systemctl enable --now sentry starts it now and at every boot)")
    }

    /// The networks' kernels need AVX2 and FMA on x86-64 (NEON on ARM, which every 64-bit ARM has).
    static func processor(on machine: Machine) -> Finding {
        guard let processor = machine.processor else { return Finding(.warning, "processor", "/proc/cpuinfo cannot be read") }
        let name = processor.name.isEmpty ? "this processor" : processor.name
        guard let kernels = processor.kernels else {
            return Finding(
                .warning, "processor", "\(name) lacks AVX2/FMA: BlazeFace, the face mesh and expressions cannot run, and sentry uses the Haar cascade",
                fix: "a processor from 2013 on (Haswell, Zen) runs them; --detector haar says so at start")
        }
        let wide = processor.hasAVX512 ? "; it has AVX-512F too, which they do not use" : ""
        return Finding(.ok, "processor", "\(name): the networks' kernels run as \(kernels.rawValue)\(wide)")
    }

    /// What `program` (found on PATH) prints on stdout, or nil when it cannot be run or fails.
    static func output(of program: String, _ arguments: [String]) -> String? {
        guard let pipe = try? FileDescriptor.pipe(options: .closeOnExec),
            let child = try? ChildProcess(program, arguments: arguments, output: .descriptor(pipe.writeEnd))
        else { return nil }
        defer { try? pipe.readEnd.close() }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while let count = try? buffer.withUnsafeMutableBytes({ try pipe.readEnd.read(into: $0) }), count > 0, bytes.count < 1 << 16 { bytes += buffer[..<count] }
        guard child.wait(timeout: .seconds(5)) == .exited(0) else {
            child.stop()
            return nil
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
