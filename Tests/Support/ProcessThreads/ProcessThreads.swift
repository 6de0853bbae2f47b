import Foundation

/// Threads of a running process, read from /proc: for tests of what threads do
/// (the worker pool's helpers, sentry's detector threads while it waits for frames).
public enum ProcessThreads {
    /// A thread's file that cannot be read or parsed (the thread is gone, or the kernel changed).
    public struct Unreadable: Error, CustomStringConvertible {
        public let path: String
        public var description: String { "cannot read a number from \(path)" }
    }

    /// Nanoseconds thread `tid` of `pid` has run (/proc/PID/task/TID/schedstat).
    public static func cpuNanoseconds(thread tid: Int, of pid: Int32 = getpid()) throws -> Int {
        try number(in: "/proc/\(pid)/task/\(tid)/schedstat", cpuNanoseconds)
    }

    /// Times thread `tid` of `pid` has given up its core, waiting (voluntary_ctxt_switches in
    /// /proc/PID/task/TID/status): a helper's parks.
    public static func waits(thread tid: Int, of pid: Int32 = getpid()) throws -> Int {
        try number(in: "/proc/\(pid)/task/\(tid)/status", waits)
    }

    /// Nanoseconds each thread named `name` has run, by thread id.
    public static func cpuNanoseconds(of pid: Int32, named name: String) -> [Int: Int] {
        threadFiles(of: pid, named: name, "schedstat").compactMapValues(cpuNanoseconds)
    }

    /// Times the threads named `name` have given up their core, waiting, in all.
    public static func waits(of pid: Int32, named name: String) -> Int {
        threadFiles(of: pid, named: name, "status").values.compactMap(waits).reduce(0, +)
    }

    /// The system calls the threads named `name` are in (the first field of
    /// /proc/PID/task/TID/syscall: its number, -1 in none, "running" on a core), by thread
    /// id: how a test knows a thread is blocked inside a call such as connect(2).
    public static func systemCalls(of pid: Int32 = getpid(), named name: String) -> [Int: Int] {
        threadFiles(of: pid, named: name, "syscall").compactMapValues { Int($0.split(separator: " ").first ?? "") }
    }

    /// poll(2)'s number in /proc's syscall files (the kernel's, asm/unistd.h; glibc's
    /// SYS_poll is a macro Swift does not import). aarch64 has only ppoll, which glibc's poll calls.
    #if arch(x86_64)
        public static let pollCall = 7
    #else
        public static let pollCall = 73
    #endif

    /// The children of `pid` whose command is `name`.
    public static func children(of pid: Int32, named name: String) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let child = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let open = stat.firstIndex(of: "(")!
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return stat[stat.index(after: open)..<close] == name && fields.count > 2 && Int32(fields[1]) == pid ? child : nil
        }
    }

    /// The first field of a schedstat file.
    private static func cpuNanoseconds(_ schedstat: String) -> Int? {
        schedstat.split(separator: " ").first.flatMap { Int($0) }
    }

    /// The voluntary_ctxt_switches line of a status file.
    private static func waits(_ status: String) -> Int? {
        status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }.flatMap { Int($0.split(separator: "\t").last ?? "") }
    }

    private static func number(in path: String, _ parse: (String) -> Int?) throws -> Int {
        guard let contents = try? String(contentsOfFile: path, encoding: .utf8), let value = parse(contents) else { throw Unreadable(path: path) }
        return value
    }

    /// The file `file` of each thread of `pid` named `name` (/proc/PID/task/TID/...), by thread id.
    private static func threadFiles(of pid: Int32, named name: String, _ file: String) -> [Int: String] {
        let tasks = "/proc/\(pid)/task"
        var result: [Int: String] = [:]
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                let contents = try? String(contentsOfFile: "\(tasks)/\(tid)/\(file)", encoding: .utf8), let id = Int(tid)
            else { continue }
            result[id] = contents
        }
        return result
    }
}
