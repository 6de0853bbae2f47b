#if canImport(Glibc)
    import Glibc
#endif
import FoundationEssentials
import ProcessorFeatures
import TextOutput

/// The system `sentry doctor` looks at: this one, or one recorded under a folder
/// (`--root DIR`, as `systemctl --root` reads an image): its `/proc`, `/sys`,
/// `/etc`, `/lib` and `/dev` read there instead. A recorded system is how the
/// tests hold a user without `dialout`, ModemManager running or brltty holding
/// a board, and how a user's report can be checked on another machine.
public struct Machine: Sendable {
    /// `/` for this machine, else the folder the recorded one lies in (no trailing slash).
    public let root: String

    public init(root: String = "/") {
        self.root = root == "/" ? "/" : (root.hasSuffix("/") ? String(root.dropLast()) : root)
    }

    /// This machine: devices can be opened and cameras stream.
    public var isLive: Bool { root == "/" }

    /// Where `absolute` lies on this machine or in the recording.
    public func path(_ absolute: String) -> String { isLive ? absolute : root + absolute }

    func text(_ absolute: String) -> String? { try? String(contentsOfFile: path(absolute), encoding: .utf8) }

    func exists(_ absolute: String) -> Bool { FileManager.default.fileExists(atPath: path(absolute)) }

    /// What `program` (systemctl, journalctl) prints about this machine: run here, or, for a
    /// recording, what was recorded of it in `ROOT/.commands/PROGRAM` (nil when nothing was):
    /// the machine doctor runs on never answers for a recorded one.
    func output(of program: String, _ arguments: [String]) -> String? {
        isLive ? Checkup.output(of: program, arguments) : text("/.commands/\(program)")
    }

    // MARK: processes

    var processes: [Int32] { ((try? FileManager.default.contentsOfDirectory(atPath: path("/proc"))) ?? []).compactMap { Int32($0) } }

    /// `/proc/PID/comm`.
    func name(of process: Int32) -> String? { text("/proc/\(process)/comm")?.trimmed() }

    /// Processes whose name is `name`.
    func processes(named name: String) -> [Int32] { processes.filter { self.name(of: $0) == name } }

    /// What `process` has open, as its `/proc/PID/fd` links name it.
    func heldDevices(of process: Int32) -> [String] {
        let folder = path("/proc/\(process)/fd")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")
        }
    }

    /// Other processes with `device` open, as far as `/proc` shows them (all of them to root).
    func holders(of device: String) -> [(pid: Int32, name: String)] {
        let target = isLive ? URL(fileURLWithPath: device).resolvingSymlinksInPath().path : device
        let me = isLive ? getpid() : -1
        return processes.filter { $0 != me && heldDevices(of: $0).contains(target) }.map { ($0, name(of: $0) ?? "?") }
    }

    // MARK: the user

    /// Who sentry runs as, and the groups of this login (`/proc/self/status`): a user added to
    /// a group has it in `/etc/group` at once, but in a login's groups only from the next login.
    struct Identity {
        var uid: UInt32
        var gid: UInt32
        var groups: Set<UInt32>
    }

    var identity: Identity? {
        guard let status = text("/proc/self/status") else { return nil }
        var fields: [String: [UInt32]] = [:]
        for line in status.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            fields[String(parts[0])] = parts[1].split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
        }
        guard let uid = fields["Uid"]?.dropFirst().first, let gid = fields["Gid"]?.dropFirst().first else { return nil }
        return Identity(uid: uid, gid: gid, groups: Set(fields["Groups"] ?? []))
    }

    /// A user's name from `/etc/passwd` (on this machine, the system's lookup when it is not there: LDAP and the like).
    func userName(_ uid: UInt32) -> String? {
        for fields in records("/etc/passwd") where fields.count > 2 && UInt32(fields[2]) == uid { return fields[0] }
        guard isLive, let entry = getpwuid(uid) else { return nil }
        return String(cString: entry.pointee.pw_name)
    }

    /// A group's id and members from `/etc/group`.
    func group(named name: String) -> (gid: UInt32, members: [String])? {
        for fields in records("/etc/group") where fields.count > 3 && fields[0] == name {
            guard let gid = UInt32(fields[2]) else { return nil }
            return (gid, fields[3].split(separator: ",").map(String.init))
        }
        return nil
    }

    /// The group that owns `device`, by name.
    func owningGroup(of device: String) -> String? {
        var info = stat()
        guard stat(path(device), &info) == 0 else { return nil }
        for fields in records("/etc/group") where fields.count > 2 && UInt32(fields[2]) == info.st_gid { return fields[0] }
        guard isLive, let entry = getgrgid(info.st_gid) else { return nil }
        return String(cString: entry.pointee.gr_name)
    }

    private func records(_ file: String) -> [[String]] {
        (text(file) ?? "").split(separator: "\n").map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) }
    }

    // MARK: the processor

    /// `/proc/cpuinfo`'s processor.
    var processor: Processor? { text("/proc/cpuinfo").map(Processor.init(cpuinfo:)) }
}
