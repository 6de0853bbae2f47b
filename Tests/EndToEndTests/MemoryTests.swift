import Foundation
import HTTPTestClient
import Scratch
import ServoSim
import Synchronization
import TestClips
import Testing
import Waiting

/// Memory that grows with what a run has done, measured by the work done,
/// never by the clock: each mode for N frames (or messages) and for 10·N,
/// resident memory compared. A leak of a kilobyte a frame shows as megabytes.
@Suite("Memory stays flat: ten times the frames, the same memory", .serialized)
struct MemoryTests {
    static let frames = 100
    /// What 10·N frames may add to N's: allocator slack, not growth.
    static func flat(_ short: Int, _ long: Int) -> Bool { long <= short + max(2048, short / 20) }

    /// `sentry ARGUMENTS --frames COUNT` on the looped demo clip as fast as it goes: its peak resident memory in KiB.
    static func peakKiB(_ arguments: [String], frames: Int) throws -> Int {
        let run = try SentryProcess(
            program: DemoClip.repository.appendingPathComponent("tools/peak-rss").path,
            [SentryProcess.executable, "--camera", DemoClip.path, "--loop", "--quiet", "--frames", "\(frames)"] + arguments)
        #expect(run.status == 0, "\(arguments): \(run.standardError)")
        let line = run.standardError.split(separator: "\n").last { $0.hasPrefix("peak-rss-kib ") } ?? ""
        return Int(line.dropFirst("peak-rss-kib ".count)) ?? 0
    }

    /// A process's resident memory now, in KiB.
    static func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    // Two runs cover what four did (the simulated servo, a pty, the face read, events
    // kept): memory only adds up, so a leak in reading the face or in keeping events
    // shows in the simulated servo's run beside the other.
    @Test(
        "sentry run on the simulated servo reading the face and keeping events, and on a pty that reads: the same peak memory for 10·N frames as for N",
        arguments: [["--serial", "sim", "--expressions", "--events", "EVENTS"], ["--serial", "PTY"]])
    func run(_ mode: [String]) throws {
        let servo = try SimulatedServo()
        defer { servo.stop() }
        let scratch = try ScratchDirectory("memory")
        let arguments = mode.map { $0 == "PTY" ? servo.devicePath : $0 == "EVENTS" ? scratch.file("events").path : $0 }
        let short = try Self.peakKiB(arguments, frames: Self.frames)
        let long = try Self.peakKiB(arguments, frames: 10 * Self.frames)
        print("memory \(mode.joined(separator: " ")): \(short) KiB after \(Self.frames) frames, \(long) KiB after \(10 * Self.frames)")
        #expect(short > 0 && Self.flat(short, long), "\(mode): \(short) KiB after \(Self.frames) frames, \(long) KiB after \(10 * Self.frames)")
    }

    @Test("the web console with a viewer reading its video: the same memory after 10·N frames as after N")
    func webWithViewer() throws {
        let console = try RunningConsole([], realtime: false)
        let pid = console.process.processIdentifier
        let viewer = try RawClient(port: console.port)
        viewer.send("GET /stream.mjpg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let reading = Atomic(true)
        let read = Atomic(0)
        let thread = Thread {
            while reading.load(ordering: .relaxed) {
                let got = viewer.read(4096).count
                if got == 0 { break }
                read.add(got, ordering: .relaxed)
            }
        }
        thread.start()
        defer {
            reading.store(false, ordering: .relaxed)
            viewer.close()
        }
        func frame() -> Int { (try? console.status()["frame"] as? Int) ?? 0 }
        let start = frame()
        #expect(eventually(within: 120) { frame() >= start + Self.frames })
        let short = Self.residentKiB(pid)
        #expect(eventually(within: 300) { frame() >= start + 10 * Self.frames })
        let long = Self.residentKiB(pid)
        #expect(read.load(ordering: .relaxed) > 100_000, "the viewer got \(read.load(ordering: .relaxed)) bytes")
        print("memory --web with a viewer: \(short) KiB after \(Self.frames) frames, \(long) KiB after \(10 * Self.frames)")
        #expect(short > 0 && Self.flat(short, long), "\(short) KiB after \(Self.frames) frames, \(long) KiB after \(10 * Self.frames)")
        #expect(console.stop() == 0)
    }

    @Test("sentry relay with a client: the same memory after 10·N messages as after N")
    func relay() throws {
        let relay = try RunningRelay()
        let pid = relay.process.processIdentifier
        let messages = (0..<1000).map { "text:X\($0 % 2 == 0 ? 10 : 170)." }
        #expect(try relay.client(messages + ["--hold", "0"]).first == "open")
        let short = Self.residentKiB(pid)
        for _ in 0..<9 { _ = try relay.client(messages + ["--hold", "0"]) }
        let long = Self.residentKiB(pid)
        print("memory relay: \(short) KiB after 1,000 messages, \(long) KiB after 10,000")
        #expect(short > 0 && Self.flat(short, long), "\(short) KiB after 1,000 messages, \(long) KiB after 10,000")
        #expect(relay.stop() == 0)
    }
}
