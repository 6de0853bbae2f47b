import Foundation
import Scratch
import Testing
import Waiting

/// The firmware in simavr with its UART on a new pty, in step with the wall
/// clock (`tools/firmware-sim --pty`), for sentry to drive.
final class FirmwareOnPty {
    let process = Process()
    let logPath: String
    let ptyPath: String
    /// Where its log goes, with anything else the test keeps beside it.
    let scratch: ScratchDirectory

    init(scratch: ScratchDirectory? = nil) throws {
        self.scratch = try scratch ?? ScratchDirectory("firmware")
        process.executableURL = URL(fileURLWithPath: FirmwareSimulator.harness)
        process.arguments = [FirmwareSimulator.elf, "--pty", "--seconds", "120"]
        logPath = self.scratch.file("firmware.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardError = FileHandle.nullDevice
        try process.run()
        var log = ""
        _ = eventually(within: 5) { [logPath] in
            log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            return log.contains("pty /dev/") && log.hasSuffix("\n")
        }
        guard let line = log.split(separator: "\n").first(where: { $0.hasPrefix("pty ") }) else {
            process.terminate()
            throw SimulatorError("firmware-sim --pty printed no pty: \(log)")
        }
        ptyPath = String(line.dropFirst(4))
    }

    deinit { if process.isRunning { process.terminate() } }

    /// Runs the real `sentry` on the firmware's pty; returns its stdout and exit status.
    func runSentry(_ arguments: [String]) throws -> (output: String, status: Int32) {
        let sentry = Process()
        sentry.executableURL = Bundle.main.bundleURL.appendingPathComponent("sentry")
        sentry.arguments = arguments + ["--serial", ptyPath]
        let output = Pipe()
        sentry.standardOutput = output
        sentry.standardError = FileHandle.nullDevice
        try sentry.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        sentry.waitUntilExit()
        return (text, sentry.terminationStatus)
    }

    /// Lets the last bytes reach the firmware, stops it, and returns its log:
    /// `t_ms pan tilt` lines and `t_ms trigger 1|0` lines.
    func stop() throws -> String {
        usleep(400_000)
        process.terminate()
        process.waitUntilExit()
        return try String(contentsOfFile: logPath, encoding: .utf8)
    }
}

@Suite("sentry drives the real firmware over a pseudo-terminal")
struct SentryToFirmwareTests {
    @Test("the firmware's pan servo follows the demo face: every aim sentry sends arrives, in order, then the parting L sweeps")
    func followsDemoFace() throws {
        let scratch = try ScratchDirectory("firmware")
        let clip = scratch.file("demo.mkv").path
        let maker = Process()
        maker.executableURL = FirmwareSimulator.repository.appendingPathComponent("tools/make-demo-clip")
        maker.arguments = [clip]
        try maker.run()
        maker.waitUntilExit()
        try #require(maker.terminationStatus == 0)

        let firmware = try FirmwareOnPty(scratch: scratch)
        let (track, status) = try firmware.runSentry(["--camera", clip, "--track", "--quiet"])
        #expect(status == 0)
        let log = try firmware.stop()

        let sent: [Int] = track.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "sent X") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        let pans: [Int] = log.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && !line.hasPrefix("pty") ? Int(fields[1]) : nil
        }
        #expect(sent.count > 50, "sentry sent \(sent.count) aims")
        // Every aim shows up on the firmware's pan servo, in the order sent.
        var position = 0
        for angle in sent {
            guard let found = pans[position...].firstIndex(of: angle) else {
                Issue.record("the firmware never went to \(angle)° (sent in order \(sent), firmware \(pans))")
                return
            }
            position = found + 1
        }
        // After the parting L, the firmware sweeps: 1° steps.
        let tail = Array(pans.suffix(5))
        #expect(tail.count == 5 && zip(tail, tail.dropFirst()).allSatisfy { abs($0 - $1) == 1 }, "no sweep at the end: \(tail)")
    }

    @Test("--fire on a still face: the firmware's trigger pin pulses once for every F sentry sends, and never without --fire")
    func firesThroughTheFirmware() throws {
        let photo = FirmwareSimulator.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png").path
        // A still photo, 25 frames a second in real time, as from a camera.
        let still = ["--camera", photo, "--loop", "--realtime", "--frames", "90", "--lock-after", "0.5", "--track", "--quiet"]
        for fire in [true, false] {
            let firmware = try FirmwareOnPty()
            let (track, status) = try firmware.runSentry(still + (fire ? ["--fire", "--fire-cooldown", "1"] : []))
            #expect(status == 0)
            let log = try firmware.stop()
            let sentShots = track.split(separator: "\n").filter { $0.contains("sent F") }.count
            let pulses = log.split(separator: "\n").filter { $0.hasSuffix(" trigger 1") }.count
            print("--fire \(fire): sentry sent \(sentShots) fire commands, the trigger pin rose \(pulses) times")
            #expect(pulses == sentShots)
            #expect(fire ? sentShots >= 2 : sentShots == 0)
        }
    }
}
