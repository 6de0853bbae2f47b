import Foundation
import Testing

@Suite("sentry drives the real firmware over a pseudo-terminal")
struct SentryToFirmwareTests {
    @Test("the firmware's pan servo follows the demo face: every aim sentry sends arrives, in order, then the parting L sweeps")
    func followsDemoFace() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sentry-firmware-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let clip = directory.appendingPathComponent("demo.mkv").path
        let maker = Process()
        maker.executableURL = FirmwareSimulator.repository.appendingPathComponent("tools/make-demo-clip")
        maker.arguments = [clip]
        try maker.run()
        maker.waitUntilExit()
        try #require(maker.terminationStatus == 0)

        // The firmware in simavr, its UART on a new pty, in step with the wall clock.
        let firmware = Process()
        firmware.executableURL = URL(fileURLWithPath: FirmwareSimulator.harness)
        firmware.arguments = [FirmwareSimulator.elf, "--pty", "--seconds", "120"]
        let logPath = directory.appendingPathComponent("firmware.log").path
        FileManager.default.createFile(atPath: logPath, contents: nil)
        firmware.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        firmware.standardError = FileHandle.nullDevice
        try firmware.run()
        defer { if firmware.isRunning { firmware.terminate() } }
        var log = ""
        for _ in 0..<500 where !(log.contains("pty /dev/") && log.hasSuffix("\n")) {
            usleep(10_000)
            log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        }
        let ptyPath = try #require(log.split(separator: "\n").first { $0.hasPrefix("pty ") }).dropFirst(4)

        let sentry = Process()
        sentry.executableURL = Bundle.main.bundleURL.appendingPathComponent("sentry")
        sentry.arguments = ["--camera", clip, "--serial", String(ptyPath), "--track", "--quiet"]
        let sentryOutput = Pipe()
        sentry.standardOutput = sentryOutput
        sentry.standardError = FileHandle.nullDevice
        try sentry.run()
        let track = String(decoding: sentryOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        sentry.waitUntilExit()
        #expect(sentry.terminationStatus == 0)
        // Let the last bytes reach the firmware and the sweep show, then stop it.
        usleep(400_000)
        firmware.terminate()
        firmware.waitUntilExit()
        log = try String(contentsOfFile: logPath, encoding: .utf8)

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
}
