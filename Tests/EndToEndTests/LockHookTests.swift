import FaceDetection
import Foundation
import Geometry
import Imaging
import Logging
import MonotonicTime
import Scratch
import SentryApp
import Serial
import ServoSim
import TestClips
import Testing
import Tracking
import TurretLinks
import TurretProtocol
import Video
import Waiting

/// One `--on-lock`/`--on-lost` run as the hook wrote it.
struct HookLine {
    var event: String
    var pan: Int
    var tilt: Int
    var box: [Int]
    var time: Double
    var frameTime: Double

    /// The shell line that writes one, appended to `file`.
    static func command(appendingTo file: String) -> String {
        "echo \"$SENTRY_EVENT $SENTRY_PAN $SENTRY_TILT $SENTRY_BOX $SENTRY_TIME $SENTRY_FRAME_TIME\" >> '\(file)'"
    }

    init?(_ line: Substring) {
        let f = line.split(separator: " ")
        guard f.count == 6, let pan = Int(f[1]), let tilt = Int(f[2]), let time = Double(f[4]), let frameTime = Double(f[5]) else { return nil }
        (event, self.pan, self.tilt, box, self.time, self.frameTime) = (
            String(f[0]), pan, tilt, f[3].split(separator: ",").compactMap { Int($0) }, time, frameTime
        )
    }
}

@Suite("Lock-on events and hooks, through the real binary")
struct LockHookTests {
    static let clipArguments = ["--camera", Clips.comesAndGoes, "--serial", "sim", "--quiet", "--lock-after", "0.5", "--lost-after", "0.2"]

    @Test("--on-lock runs exactly once per lock and --on-lost once per loss, with pan, tilt, box and times in the environment")
    func oncePerLockAndLoss() throws {
        let scratch = try ScratchDirectory("lock")
        let file = scratch.file("events").path
        let hook = HookLine.command(appendingTo: file)
        let before = Date().timeIntervalSince1970
        // Real time, so that each hook has long finished before the next event.
        let run = try SentryProcess(Self.clipArguments + ["--realtime", "--on-lock", hook, "--on-lost", hook, "--track"])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").compactMap(HookLine.init)
        #expect(lines.map(\.event) == ["lock", "lost", "lock", "lost"], "\(lines)")
        guard lines.count == 4 else { return }
        // Locked 0.5 s after the face appears; lost 0.2 s after it was last seen.
        let expectedFrameTimes: [ClosedRange<Double>] = [0.5...0.75, 1.65...1.95, 3.0...3.25, 4.15...4.45]
        for (line, range) in zip(lines, expectedFrameTimes) {
            #expect(range.contains(line.frameTime), "\(line.event) at frame time \(line.frameTime), expected \(range)")
            #expect(line.time >= before - 1 && line.time <= Date().timeIntervalSince1970 + 1, "SENTRY_TIME \(line.time)")
            #expect(line.box.count == 4)
            if line.box.count == 4 {
                let centre = (Double(line.box[0]) + Double(line.box[2]) / 2, Double(line.box[1]) + Double(line.box[3]) / 2)
                #expect(abs(centre.0 - 320) < 30 && abs(centre.1 - 240) < 30, "SENTRY_BOX \(line.box)")
            }
            #expect(line.tilt == 90)
        }
        // At a lock the turret holds the face's aim (centre: 90°).
        for line in lines where line.event == "lock" { #expect(abs(line.pan - 90) <= 3, "SENTRY_PAN \(line.pan)") }
    }

    @Test("a hook that sleeps 10 s neither holds up a frame nor piles up: the run ends first, one hook ran, the rest were skipped and said so")
    func sleepingHook() throws {
        let scratch = try ScratchDirectory("lock")
        let file = scratch.file("started").path
        let hook = "echo $$ >> '\(file)'; sleep 10; echo done >> '\(file)'"
        let run = try SentryProcess(Self.clipArguments + ["--on-lock", hook, "--on-lost", hook, "--hook-timeout", "30", "--log-level", "warning"])
        #expect(run.status == 0, "\(run.standardError)")
        // Every frame went through while the first hook slept: had a frame
        // waited for it, it would have finished ("done") before the run did.
        #expect(run.standardOutput.contains("simulated servo: 50 frames"), "\(run.standardOutput)")
        let started = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(started.count == 1, "hooks started: \(started)")
        #expect(!started.contains("done"))
        #expect(run.standardError.contains("skipped"), "\(run.standardError)")
        #expect(run.standardError.contains("hook still running at exit: stopped"), "\(run.standardError)")
    }

    @Test(
        "a hook's processes end with sentry: stopped (SIGTERM), the hook's shell and what it started are gone; killed (SIGKILL), its shell is",
        arguments: [SIGTERM, SIGKILL])
    func hooksEndWithSentry(signal: Int32) throws {
        let scratch = try ScratchDirectory("lock")
        let pids = scratch.file("pids").path
        let hook = "sleep 300 & echo $$ $! > '\(pids).new'; mv '\(pids).new' '\(pids)'; wait"
        let sentry = try RunningSentry(Self.clipArguments + ["--realtime", "--loop", "--on-lock", hook, "--hook-timeout", "600"])
        #expect(eventually(within: 30) { FileManager.default.fileExists(atPath: pids) }, "no hook ran")
        let started = ((try? String(contentsOfFile: pids, encoding: .utf8)) ?? "").split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(started.count == 2)
        guard started.count == 2 else { return }
        let (shell, sleeper) = (started[0], started[1])
        kill(sentry.process.processIdentifier, signal)
        sentry.process.waitUntilExit()
        /// Gone, or a zombie its new parent has yet to reap.
        func ended(_ pid: pid_t) -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        #expect(eventually(within: 10) { ended(shell) }, "the hook's shell outlived sentry")
        if signal == SIGTERM {
            #expect(eventually(within: 10) { ended(sleeper) }, "what the hook started outlived sentry")
        } else {
            // The parent-death signal reaches the shell alone; under systemd the unit's cgroup goes whole.
            kill(sleeper, SIGKILL)
        }
    }

    @Test("--on-event runs a command for any kind of event (an arrival, a shot), with the event's kind, id and pictures in its environment")
    func onEvent() throws {
        let scratch = try ScratchDirectory("lock")
        let file = scratch.file("events").path
        let hook = "test -s \"$SENTRY_SNAPSHOT\" && echo \"$SENTRY_EVENT $SENTRY_EVENT_ID $SENTRY_PAN\" >> '\(file)'"
        let run = try SentryProcess(
            Self.clipArguments + ["--realtime", "--fire", "--pan-only-below-heads", "--fire-cooldown", "1", "--on-event", "arrive=\(hook)", "--on-event", "shot=\(hook)"])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(lines.first?.first == "arrive" && lines.contains { $0.first == "shot" }, "\(lines)")
        #expect(Set(lines.compactMap(\.first)) == ["arrive", "shot"], "\(lines)")
        #expect(lines.allSatisfy { $0.count == 3 && $0[1].contains("-\($0[0])-") }, "each line carries its event's id: \(lines)")
    }

    @Test(
        "a bad --on-event is refused in one line: no such event, no command, two commands for one kind",
        arguments: [
            (["--on-event", "bogus=true"], "'bogus' is no event; give KIND=CMD with KIND one of lock, lost, shot, arrive, expression"),
            (["--on-event", "lock="], "--on-event lock= needs a shell command after '='"),
            (["--on-event", "arrive"], "--on-event arrive needs a shell command after '='"),
            (["--on-lock", "true", "--on-event", "lock=false"], "lock has a command already"),
        ])
    func badOnEvent(arguments: [String], says: String) throws {
        let run = try SentryProcess(Self.clipArguments + arguments)
        #expect(run.status == 64 && run.standardError.contains(says), "\(run.standardError)")
    }

    @Test("a failing hook is logged with its status and the run goes on to the end")
    func failingHook() throws {
        let run = try SentryProcess(Self.clipArguments + ["--on-lock", "exit 7", "--log-level", "warning"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.contains("hook on-lock exited with status 7: exit 7"), "\(run.standardError)")
        #expect(run.standardOutput.contains("simulated servo: 50 frames"), "\(run.standardOutput)")
    }

    @Test("the status line says Tracking (ARMED · Shooting when armed with --fire), then Locked once the target is held; armed, every line says so")
    func statusLine() throws {
        #expect(StatusLine.hud(for: Aim(pan: 93, tilt: 71), locked: true, armed: false, tiltEnabled: true) == "Locked — X: 93 | Y: 71")
        #expect(StatusLine.hud(for: Aim(pan: 93, tilt: 71), locked: true, armed: true, tiltEnabled: true) == "ARMED · Locked — X: 93 | Y: 71")
        #expect(
            StatusLine.hud(for: Aim(pan: 93, tilt: 71), locked: true, armed: true, tiltEnabled: true, heldFire: .firePointOnFace)
                == "ARMED · Locked, holding fire: fire point on a face — X: 93 | Y: 71")
        #expect(StatusLine.hud(for: Aim(pan: 93, tilt: 71), locked: false, armed: false, tiltEnabled: false) == "Tracking — X: 93")
        #expect(StatusLine.hud(for: Aim(pan: 93, tilt: 71), locked: false, armed: true, tiltEnabled: false) == "ARMED · Shooting — X: 93")
        #expect(StatusLine.hud(for: nil, armed: true, tiltEnabled: false) == "ARMED · Sentry mode — no targets")
        for (flags, modes) in [([String](), ["Tracking", "Locked", "Sentry mode"]), (["--fire", "--tilt"], ["ARMED · Shooting", "ARMED · Locked", "ARMED · Sentry mode"])] {
            let run = try SentryProcess(["--camera", Clips.comesAndGoes, "--serial", "sim", "--lock-after", "0.5"] + flags)
            // The status lines, not the log's (`… notice sentry: [SentryApp] target locked at …`).
            let hud = run.standardError.split(separator: "\n").filter { !$0.hasPrefix("sentry: ARMED") && !$0.contains(" sentry: [") }.map { line in
                String(line.prefix { $0 != "—" && $0 != "," }).trimmingCharacters(in: .whitespaces)
            }
            #expect(Array(hud.prefix(3)) == modes, "\(flags): \(run.standardError)")
        }
    }
}

@Suite("sentry simulate shows the trigger")
struct SimulateFireTests {
    @Test("a shot the simulated firmware accepts is printed as FIRE; a refused one is not")
    func printsShots() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SentryProcess.executable)
        process.arguments = ["simulate", "--duration", "2"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let reader = out.fileHandleForReading
        var text = ""
        while !text.contains("\n"), case let more = reader.availableData, !more.isEmpty { text += String(decoding: more, as: UTF8.self) }
        let path = try #require(text.split(separator: "\n").first?.split(separator: " ").last.map(String.init))
        let port = try SerialPort(path: path)
        _ = try port.write(Array("F90.X100.".utf8))  // never aimed: refused
        usleep(800_000)  // the first aim counts a whole 180° of travel: 0.6 s, then 0.1 s still
        _ = try port.write(Array("F100.F100.".utf8))  // aimed and settled: the first fires; the second, right after it, is too soon
        process.waitUntilExit()
        port.close()
        text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        let fires = text.split(separator: "\n").filter { $0.contains("FIRE") }
        #expect(fires.count == 1, "\(text)")
        #expect(fires.first?.contains("pan 100") == true && fires.first?.contains("shot 1") == true, "\(text)")
    }
}
