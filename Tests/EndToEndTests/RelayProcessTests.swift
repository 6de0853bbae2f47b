import Foundation
import MonotonicTime
import Scratch
import Serial
import Testing
import TurretProtocol
import Waiting

#if canImport(Glibc)
    import Glibc
    import TestClips
#endif

/// The port in the first line of `log` that holds `marker` followed by
/// `HOST:PORT` or `PORT`: where a server bound to port 0 says it listens.
func listeningPort(in log: String, after marker: String) -> UInt16? {
    guard let range = log.range(of: marker) else { return nil }
    let rest = log[range.upperBound...].prefix { $0 != "/" && $0 != " " && $0 != "\n" }
    return UInt16(rest.split(separator: ":").last ?? "")
}

/// `sentry relay` on a pty, on a loopback port the system chose (`--listen 127.0.0.1:0`).
final class RunningRelay {
    let process = Process()
    private(set) var port: UInt16 = 0
    let pty: PseudoTerminal
    let scratch: ScratchDirectory
    let errors: URL
    var url: String { "ws://127.0.0.1:\(port)/" }

    init(_ extra: [String] = [], listen: String? = nil) throws {
        pty = try PseudoTerminal()
        scratch = try ScratchDirectory("relay")
        errors = scratch.file("stderr.log")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: SentryProcess.executable)
        process.arguments = ["relay", "--serial", pty.devicePath, "--listen", listen ?? "127.0.0.1:0", "--log-level", "notice"] + extra
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        _ = eventually(within: 10) { [self] in
            port = listeningPort(in: log, after: "relay: ws://") ?? 0
            return port != 0 || !process.isRunning
        }
    }

    var log: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }

    /// Runs tools/ws-client with `arguments`; its output lines.
    func client(_ arguments: [String], url: String? = nil) throws -> [String] {
        let run = try SentryProcess(
            program: "/usr/bin/env",
            ["python3", DemoClip.repository.appendingPathComponent("tools/ws-client").path, url ?? self.url] + arguments)
        return run.standardOutput.split(separator: "\n").map(String.init)
    }

    /// What reaches the pty within `seconds`, or, with `quiet`, until nothing more has
    /// come for that long: all of it, however late a loaded host lets it through.
    func received(within seconds: Double = 0.5, quiet: Double = .infinity) -> String {
        var bytes: [UInt8] = []
        let deadline = monotonicSeconds() + seconds
        var lastByte = monotonicSeconds()
        while monotonicSeconds() < deadline, monotonicSeconds() - lastByte < quiet {
            let more = pty.read(timeout: 0.05)
            if !more.isEmpty { lastByte = monotonicSeconds() }
            bytes += more
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { _ = stop() }
}

@Suite("sentry relay with a real WebSocket client (Python websockets) and a pty", .serialized)
struct RelayProcessTests {
    @Test("the original app's messages reach the pty as exactly those bytes, in order; the turret holds still when it leaves")
    func originalMessages() throws {
        let relay = try RunningRelay(["--fire"])
        let messages = ["X90.", "X100.", "L", "X45.", "Y30.", "X46.Y31.", "F46."]
        let said = try relay.client(messages.map { "text:\($0)" })
        #expect(said.first == "open" && said.last == "closed 1000", "\(said)")
        // Aimed when it left: nothing more (--on-exit hold).
        #expect(relay.received() == messages.joined())
        #expect(relay.stop() == 0)
    }

    @Test("without --fire a message holding F is refused whole (1008), nothing of it reaches the pty, and the log says why in one line")
    func fireNeedsItsOwnFlag() throws {
        let relay = try RunningRelay()
        #expect(relay.log.contains("fire commands refused (no --fire)"), "\(relay.log)")
        let said = try relay.client(["text:X100.", "text:X100.F100."])
        #expect(said.last?.hasPrefix("closed 1008 this relay was started without --fire") == true, "\(said)")
        #expect(relay.received() == "X100.")
        let refusals = relay.log.split(separator: "\n").filter { $0.contains("without --fire") }
        #expect(refusals.count == 1, "\(relay.log)")
        #expect(relay.stop() == 0)
    }

    @Test("a controller that leaves while the turret sweeps leaves it still: an X at the angle the sweep reached, never L again")
    func leavingStopsASweep() throws {
        let relay = try RunningRelay()
        let said = try relay.client(["text:X90.", "text:L", "sleep:0.6"])
        #expect(said.last == "closed 1000", "\(said)")
        let received = relay.received()
        // 0.6 s of a 15 ms/° sweep upward from 90: about 130°.
        let stop = received.hasPrefix("X90.LX") && received.hasSuffix(".") ? Int(received.dropFirst("X90.LX".count).dropLast()) : nil
        #expect((110...160).contains(stop ?? 0), "\(received)")
        #expect(relay.stop() == 0)
    }

    @Test("garbage, binary, oversized and invalid UTF-8 never reach the pty, and are answered with their close codes")
    func refused() throws {
        let relay = try RunningRelay()
        let cases: [(String, String)] = [
            ("text:hello", "closed 1007"), ("text:X9 0.", "closed 1007"), ("binary:58392e", "closed 1003"),
            ("text:" + String(repeating: "X90.", count: 300), "closed 1009"), ("text:X9\\xff0.", "closed 1007"),
        ]
        for (step, expected) in cases {
            let said = try relay.client([step])
            #expect(said.last?.hasPrefix(expected) == true, "\(step.prefix(30)): \(said)")
        }
        // Nothing: no aim was ever taken, and leaving holds the turret still.
        #expect(relay.received() == "")
        #expect(relay.log.contains("message refused (1009)"))
    }

    @Test("a second controller is turned away while the first holds the turret")
    func oneController() throws {
        let relay = try RunningRelay()
        let first = Process()
        first.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        first.arguments = ["python3", DemoClip.repository.appendingPathComponent("tools/ws-client").path, relay.url, "--hold", "2", "text:X70."]
        first.standardOutput = FileHandle.nullDevice
        try first.run()
        // The first holds the turret once its aim has reached it.
        var reached = ""
        #expect(eventually { reached += relay.received(within: 0.05); return reached.hasPrefix("X70.") }, "the first client's aim never arrived")
        let second = try relay.client(["text:X80."])
        #expect(second.last?.hasPrefix("closed 1013 another controller is connected") == true, "\(second)")
        first.waitUntilExit()
        #expect(reached + relay.received() == "X70.")
    }

    @Test("the controller dropping mid-message leaves the turret where it was aimed; --on-exit scan sweeps instead")
    func dropped() throws {
        let relay = try RunningRelay()
        let said = try relay.client(["text:X60.", "sleep:0.3", "--drop"])
        #expect(said.last == "dropped", "\(said)")
        #expect(relay.received() == "X60.")
        let scanning = try RunningRelay(["--on-exit", "scan"])
        _ = try scanning.client(["text:X60.", "sleep:0.3", "--drop"])
        #expect(scanning.received() == "X60.L")
    }

    @Test("off loopback a token is required: refused at start without one, then asked of every client")
    func token() throws {
        let open = try SentryProcess(["relay", "--serial", "sim", "--listen", "0.0.0.0:0"])
        #expect(open.status == 64 && open.standardError.contains("reachable from the network: give --token"), "\(open.standardError)")
        let relay = try RunningRelay(["--token", "s3cret"], listen: "0.0.0.0:0")
        let url = "ws://127.0.0.1:\(relay.port)/"
        #expect(try relay.client(["text:X10."], url: url) == ["refused 401"])
        #expect(try relay.client(["text:X11."], url: url + "?token=wrong") == ["refused 401"])
        #expect(try relay.client(["text:X12."], url: url + "?token=s3cret").first == "open")
        #expect(try relay.client(["--header", "Authorization: Bearer s3cret", "text:X13."], url: url).first == "open")
        #expect(relay.received() == "X12.X13.")
    }

    @Test("1,000 connect/disconnect cycles leave descriptors and memory flat")
    func cycles() throws {
        let relay = try RunningRelay()
        func usage() -> (descriptors: Int, residentKB: Int) {
            let pid = relay.process.processIdentifier
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? -1
            return (descriptors, rss)
        }
        let script = """
            import asyncio, sys, websockets
            async def main(url, n):
                for i in range(n):
                    async with websockets.connect(url) as c:
                        await c.send("X%d." % (10 + i % 2))
            asyncio.run(main(sys.argv[1], int(sys.argv[2])))
            """
        func cycle(_ count: Int) throws {
            let run = try SentryProcess(program: "/usr/bin/env", ["python3", "-c", script, relay.url, String(count)])
            #expect(run.status == 0, "\(run.standardError)")
        }
        /// The relay's usage once its descriptors have held still for 0.3 s (the last controller's connection closed).
        func settledUsage() -> (descriptors: Int, residentKB: Int) {
            var seen = (count: usage().descriptors, at: monotonicSeconds())
            _ = eventually(within: 5) {
                let count = usage().descriptors
                if count != seen.count { seen = (count, monotonicSeconds()) }
                return monotonicSeconds() - seen.at > 0.3
            }
            return usage()
        }
        try cycle(100)
        let before = settledUsage()
        try cycle(1000)
        let after = settledUsage()
        print(
            "relay after 100 cycles: \(before.descriptors) descriptors, \(before.residentKB) KiB resident; after 1,100: \(after.descriptors) descriptors, \(after.residentKB) KiB"
        )
        #expect(after.descriptors == before.descriptors)
        #expect(after.residentKB - before.residentKB < 4096)
        #expect(relay.process.isRunning)
    }

    @Test("a port that falls behind (nobody reads the pty): older waiting aims give way, the newest always arrives")
    func newestAimWins() throws {
        let relay = try RunningRelay()
        let aims = (0..<3000).map { "text:X\(10 + $0 % 150)." } + ["text:X170."]
        let said = try relay.client(aims + ["--hold", "1"])
        #expect(said.first == "open")
        let received = relay.received(within: 2)
        #expect(received.hasSuffix("X170."), "\(received.suffix(40))")
        #expect(Command.decode(Array(received.utf8)).flatMap(\.bytes) == Array(received.utf8), "only whole commands on the line")
    }

    @Test("sentry --serial ws:// through the relay writes the same bytes to the pty as --serial PTY directly")
    func sameBytesThroughTheRelay() throws {
        let direct = try PseudoTerminal()
        let run = try SentryProcess(["--camera", DemoClip.path, "--serial", direct.devicePath, "--quiet"])
        #expect(run.status == 0, "\(run.standardError)")
        let directBytes = String(decoding: collect(direct, timeout: 1) { _ in false }, as: UTF8.self)
        let relay = try RunningRelay()
        let remote = try SentryProcess(["--camera", DemoClip.path, "--serial", relay.url, "--quiet"])
        #expect(remote.status == 0, "\(remote.standardError)")
        // Until the line has been quiet for a second: a fixed second once ended 36 bytes short.
        let relayed = relay.received(within: 10, quiet: 1)
        #expect(directBytes.count > 100)
        #expect(relayed == directBytes)
    }

    @Test("the relay restarting under a running sentry: sentry reports it, reconnects, and sends its aim again")
    func relayRestarts() throws {
        let first = try RunningRelay()
        let scratch = try ScratchDirectory("ws")
        let log = scratch.file("stderr.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let sentry = Process()
        sentry.executableURL = URL(fileURLWithPath: SentryProcess.executable)
        sentry.arguments = ["--camera", ModelLocationTests.photo, "--loop", "--realtime", "--serial", first.url, "--log-level", "notice"]
        sentry.standardOutput = FileHandle.nullDevice
        sentry.standardError = try FileHandle(forWritingTo: log)
        try sentry.run()
        defer { if sentry.isRunning { sentry.terminate() }; sentry.waitUntilExit() }
        let before = String(decoding: collect(first.pty, timeout: 10) { $0.contains(UInt8(ascii: ".")) }, as: UTF8.self)
        #expect(before.hasPrefix("X"), "no aim through the first relay: \(before)")
        #expect(first.stop() == 0)
        // sentry has seen the relay go before a new one listens on its port.
        #expect(eventually { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("connection lost") })
        let second = try RunningRelay([], listen: "127.0.0.1:\(first.port)")
        let after = String(decoding: collect(second.pty, timeout: 10) { $0.contains(UInt8(ascii: ".")) }, as: UTF8.self)
        #expect(after == before, "the aim was not sent again: before \(before), after \(after)")
        let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(said.contains("connection lost"), "\(said)")
        #expect(said.contains("serial: reconnecting"), "\(said)")
        #expect(said.contains("is back; aiming again"), "\(said)")
        #expect(sentry.isRunning)
    }
}
