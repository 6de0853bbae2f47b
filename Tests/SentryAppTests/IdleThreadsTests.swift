import Foundation
import Serial
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Threads of a running process, read from /proc.
enum ProcessThreads {
    /// The file `file` of each thread of `pid` named `name` (/proc/PID/task/TID/...), by thread id.
    private static func threadFiles(of pid: Int32, named name: String, _ file: String) -> [Int: String] {
        let tasks = "/proc/\(pid)/task"
        var result: [Int: String] = [:]
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                  let contents = try? String(contentsOfFile: "\(tasks)/\(tid)/\(file)", encoding: .utf8), let id = Int(tid) else { continue }
            result[id] = contents
        }
        return result
    }

    /// Nanoseconds each thread named `name` has run (from /proc/PID/task/TID/schedstat), by thread id.
    static func cpuNanoseconds(of pid: Int32, named name: String) -> [Int: Int] {
        threadFiles(of: pid, named: name, "schedstat").compactMapValues { stat in stat.split(separator: " ").first.flatMap { Int($0) } }
    }

    /// Times each thread named `name` has given up its core, waiting (voluntary_ctxt_switches in
    /// /proc/PID/task/TID/status): a helper's parks.
    static func waits(of pid: Int32, named name: String) -> Int {
        threadFiles(of: pid, named: name, "status").values.compactMap { status in
            status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }.flatMap { Int($0.split(separator: "\t").last ?? "") }
        }.reduce(0, +)
    }

    /// The children of `pid` whose command is `name`.
    static func children(of pid: Int32, named name: String) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let child = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let open = stat.firstIndex(of: "(")!
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return stat[stat.index(after: open)..<close] == name && fields.count > 2 && Int32(fields[1]) == pid ? child : nil
        }
    }
}

@Suite("The detector's helper threads sleep while sentry waits for frames and keep out of the caller's way")
struct IdleThreadsTests {
    @Test("two detector threads confined to one core: the helper yields it to the caller instead of parking at every step")
    func helperYieldsASharedCore() throws {
        let pty = try PseudoTerminal()
        let sentry = try RunningSentry(["--camera", DemoClip.path, "--serial", pty.devicePath, "--realtime", "--loop",
                                        "--threads", "2", "--detect-fps", "every", "--quiet"], confinedTo: 0)
        defer { _ = sentry.stop() }
        let pid = sentry.process.processIdentifier
        #expect(!collect(pty, timeout: 20) { !$0.isEmpty }.isEmpty, "sentry never wrote to the port")
        let before = ProcessThreads.waits(of: pid, named: "sentry-tflite-1")
        usleep(2_000_000)
        let parks = ProcessThreads.waits(of: pid, named: "sentry-tflite-1") - before
        // Spinning through the caller's time would park it at most steps: ~1,800 a
        // second at 30 fps (98 steps a frame); yielding, ~70.
        #expect(parks < 600, "the helper parked \(parks) times in two seconds")
    }

    @Test("two detector threads: with the video source paused, the helpers use no CPU (their time in /proc stands still)")
    func helperSleepsWhileSourcePaused() throws {
        let pty = try PseudoTerminal()
        let sentry = try RunningSentry(["--camera", DemoClip.path, "--serial", pty.devicePath, "--realtime", "--loop",
                                        "--threads", "2", "--quiet"])
        defer { _ = sentry.stop() }
        let pid = sentry.process.processIdentifier
        #expect(!collect(pty, timeout: 20) { !$0.isEmpty }.isEmpty, "sentry never wrote to the port")
        let helpersRunning = ProcessThreads.cpuNanoseconds(of: pid, named: "sentry-tflite-1")
        // One helper per network: the full-range model's and, with --detect-fps, the short-range one's.
        try #require(!helpersRunning.isEmpty, "no helper thread named sentry-tflite-1")
        let decoders = ProcessThreads.children(of: pid, named: "ffmpeg")
        try #require(decoders.count == 1, "one ffmpeg child: \(decoders)")
        // Pause the decoder: sentry drains the pipe and blocks waiting for a frame.
        kill(decoders[0], SIGSTOP)
        defer { kill(decoders[0], SIGCONT) }
        usleep(500_000)
        let before = ProcessThreads.cpuNanoseconds(of: pid, named: "sentry-tflite-1")
        usleep(1_000_000)
        let after = ProcessThreads.cpuNanoseconds(of: pid, named: "sentry-tflite-1")
        let used = after.map { tid, nanoseconds in nanoseconds - (before[tid] ?? nanoseconds) }.reduce(0, +)
        // Spinning would be ~1e9 ns; a parked thread shows none.
        #expect(used < 1_000_000, "the helpers ran \(used) ns in a second with no frames")
        // And it did work while there were frames.
        let worked = after.values.reduce(0, +)
        #expect(worked > 0, "the helpers never ran")
    }
}
