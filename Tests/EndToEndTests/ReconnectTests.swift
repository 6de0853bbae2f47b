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

@Suite("Serial faults: unplug, replug, boot wait", .serialized)
struct ReconnectTests {
    @Test("the port's device goes away and comes back at the same path: sentry reconnects and re-sends the aim")
    func reconnectsThroughSymlink() throws {
        let directory = try ScratchDirectory("replug")
        let link = directory.file("ttyACM-test").path

        let first = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: first.devicePath)
        let sentry = try RunningSentry(["--camera", DemoClip.path, "--serial", link, "--realtime", "--loop", "--quiet"])

        let before = collect(first, timeout: 10) { Command.decode($0).contains { if case .pan = $0 { true } else { false } } }
        #expect(Command.decode(before).contains { if case .pan = $0 { true } else { false } }, "no aim before the unplug: \(before)")
        // Unplug: the device node disappears and writes fail with EIO.
        first.close()
        try FileManager.default.removeItem(atPath: link)
        #expect(eventually { !holds(sentry.process, first.devicePath) }, "sentry kept the port that went away open")
        #expect(sentry.process.isRunning, "sentry must keep running while the port is gone")

        // Replug: a new device at the same path.
        let second = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: second.devicePath)
        let after = collect(second, timeout: 5) { Command.decode($0).contains { if case .pan = $0 { true } else { false } } }
        let commands = Command.decode(after)
        #expect(commands.contains { if case .pan = $0 { true } else { false } }, "the aim was not re-sent after the replug: \(after)")
        #expect(isPureProtocol(before) && isPureProtocol(after), "only protocol bytes on the line")
        #expect(sentry.stop() == 0)
    }

    @Test("a replug while nothing is written (no face, L already sent) is noticed: sentry reconnects and sends L again")
    func idleReplug() throws {
        let directory = try ScratchDirectory("idle-replug")
        let link = directory.file("ttyUSB-test").path
        let first = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: first.devicePath)
        let sentry = try RunningSentry(["--camera", Clips.nobody, "--serial", link, "--realtime", "--loop", "--quiet"])

        let before = collect(first, timeout: 10) { Command.decode($0).contains(.lost) }
        #expect(Command.decode(before) == [.lost], "before the unplug: \(before)")
        // Nothing more is written now. Unplug, and plug back in a moment later
        // (a board comes back centred, not sweeping).
        first.close()
        try FileManager.default.removeItem(atPath: link)
        #expect(eventually { !holds(sentry.process, first.devicePath) }, "sentry kept the port that went away open")
        let second = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: second.devicePath)
        let after = collect(second, timeout: 5) { Command.decode($0).contains(.lost) }
        #expect(Command.decode(after) == [.lost], "after the replug: \(after)")
        #expect(sentry.stop() == 0)
    }

    @Test("a port hung up with its output unread: the link lets go on its own thread, and the frame loop runs on without a stall")
    func hangUpWithOutputPending() throws {
        let directory = try ScratchDirectory("hang-up-pending")
        let link = directory.file("ttyUSB-test").path
        let board = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: board.devicePath)
        let log = directory.file("sentry.log")
        let sentry = try RunningSentry(
            ["--camera", DemoClip.path, "--serial", link, "--realtime", "--loop", "--quiet", "--track", "--log-level", "info"], output: log)
        // Nothing reads the board's side, so the aims wait on the line.
        #expect(eventually { pendingBytes(board) > 0 }, "sentry wrote nothing")
        try FileManager.default.removeItem(atPath: link)
        board.close()
        #expect(eventually { logText(log).contains("device hung up") }, "the hang-up was not noticed: \(logText(log))")
        // The loop goes on: aims for the track table after the hang-up, with no port to take them.
        let atHangUp = logText(log).components(separatedBy: "device hung up")[0].components(separatedBy: " sent ").count
        #expect(eventually { logText(log).components(separatedBy: " sent ").count > atHangUp + 3 }, "the frame loop stopped after the hang-up")
        #expect(sentry.stop() == 0)
        let afterHangUp = logText(log).components(separatedBy: "device hung up").dropFirst().joined()
        #expect(!afterHangUp.contains("frame loop stalled"), "\(afterHangUp)")
        #expect(afterHangUp.contains("frame loop: "), "no summary of the frame loop: \(afterHangUp)")
    }

    @Test("after opening, nothing is sent until the boot wait is over")
    func waitsForBoot() throws {
        let pty = try PseudoTerminal()
        let start = monotonicSeconds()
        let sentry = try RunningSentry(["--camera", DemoClip.path, "--serial", pty.devicePath, "--boot-wait", "1.5", "--realtime", "--quiet"])
        let bytes = collect(pty, timeout: 10) { !$0.isEmpty }
        let elapsed = monotonicSeconds() - start
        #expect(!bytes.isEmpty)
        #expect(elapsed >= 1.5, "first byte after \(elapsed) s")
        _ = sentry.stop()
    }

    @Test("a READY line from the board ends the boot wait early")
    func readyEndsBootWait() throws {
        let pty = try PseudoTerminal()
        let start = monotonicSeconds()
        let sentry = try RunningSentry(["--camera", DemoClip.path, "--serial", pty.devicePath, "--boot-wait", "20", "--realtime", "--quiet"])
        // The board speaks once sentry holds the port open (its descriptors in /proc say so).
        #expect(eventually { holds(sentry.process, pty.devicePath) })
        let banner = Array("READY\r\n".utf8)
        _ = banner.withUnsafeBytes { write(pty.controller!.rawValue, $0.baseAddress, $0.count) }
        let bytes = collect(pty, timeout: 10) { !$0.isEmpty }
        #expect(!bytes.isEmpty && monotonicSeconds() - start < 10, "READY did not end the wait")
        #expect(isPureProtocol(bytes))
        _ = sentry.stop()
    }
}

/// Whether `process` has `path` open (its descriptors in /proc say so).
private func holds(_ process: Process, _ path: String) -> Bool {
    let descriptors = "/proc/\(process.processIdentifier)/fd"
    return ((try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []).contains {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + $0)) == path
    }
}

/// Bytes written to the pty's device side that its controller has not read yet.
private func pendingBytes(_ pty: PseudoTerminal) -> Int32 {
    guard let controller = pty.controller else { return 0 }
    var count: Int32 = 0
    return ioctl(controller.rawValue, UInt(FIONREAD), &count) == 0 ? count : 0
}

private func logText(_ file: URL) -> String {
    (try? String(contentsOf: file, encoding: .utf8)) ?? ""
}
