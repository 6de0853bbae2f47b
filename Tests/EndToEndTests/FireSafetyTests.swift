import Foundation
import Scratch
import Testing
import TestClips

/// SPEC §8's safety through the binary: a shot only from a process started
/// with --fire, never with the fire point on a face, armed always visible.
@Suite("Armed means what the safety page says")
struct FireSafetyTests {
    static let astronaut = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png").path

    /// The top `height` rows of the astronaut photo (512 wide; the face's box
    /// spans rows 72-173, centre 122, 101 high).
    static func cropped(height: Int, in scratch: ScratchDirectory) throws -> String {
        let path = scratch.file("astronaut-\(height).png").path
        let ffmpeg = try SentryProcess(
            program: "/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", astronaut, "-vf", "crop=512:\(height):0:0", path])
        try #require(ffmpeg.status == 0, "\(ffmpeg.standardError)")
        return path
    }

    /// An armed run on a still photo in real time against the simulated servo.
    static func armedRun(on photo: String, _ extra: [String] = []) throws -> SentryProcess {
        try SentryProcess(
            ["--camera", photo, "--loop", "--realtime", "--frames", "75", "--serial", "sim", "--tilt", "--fire", "--lock-after", "0.5",
             "--fire-cooldown", "1", "--track"] + extra)
    }

    @Test("a fire point clamped onto the face (a 164-row crop: the chest is out of the frame) is never fired at, and the status line says why; 300 rows fire")
    func clampedOntoTheFace() throws {
        let scratch = try ScratchDirectory("fire-safety")
        let short = try Self.armedRun(on: try Self.cropped(height: 164, in: scratch))
        #expect(short.status == 0, "\(short.standardError)")
        #expect(!short.standardOutput.contains("sent F") && short.standardOutput.contains(", 0 shots fired"), "\(short.standardOutput)")
        #expect(short.standardError.contains("ARMED · Locked, holding fire: fire point on a face"), "\(short.standardError)")
        let tall = try Self.armedRun(on: try Self.cropped(height: 300, in: scratch))
        #expect(tall.standardOutput.contains("sent F"), "the chest in view: \(tall.standardOutput.suffix(300))")
        #expect(tall.standardError.hasPrefix("sentry: ARMED (--fire on the command line)"), "\(tall.standardError.prefix(200))")
    }

    @Test("--fire without --tilt, --fire-below under 1 and --pan-only-below-heads without --fire: one line each, exit 64; pan-only below heads fires")
    func refusedCombinations() throws {
        let base = ["--camera", Self.astronaut, "--serial", "sim", "--frames", "1"]
        for (extra, says) in [
            (["--fire"], "--fire without --tilt cannot aim the fire point below faces"),
            (["--fire", "--tilt", "--fire-below", "0"], "--fire-below 0 puts the fire point on the face"),
            (["--fire", "--tilt", "--fire-below", "0.7"], "--fire-below 0.7 puts the fire point on the face"),
            (["--pan-only-below-heads"], "--pan-only-below-heads describes an armed blaster"),
        ] {
            let run = try SentryProcess(base + extra)
            #expect(run.status == 64 && run.standardError.hasPrefix("Error: \(says)"), "\(extra): \(run.standardError)")
        }
        let panOnly = try SentryProcess(
            ["--camera", Self.astronaut, "--loop", "--realtime", "--frames", "60", "--serial", "sim", "--fire", "--pan-only-below-heads",
             "--lock-after", "0.5", "--track"])
        #expect(panOnly.status == 0 && panOnly.standardOutput.contains("sent F"), "\(panOnly.standardError)")
    }

    @Test("a settings file cannot arm: fire = true is refused naming its line, sentry config and doctor say so; fire = false is fine")
    func settingsFileCannotArm() throws {
        let scratch = try ScratchDirectory("fire-settings")
        let arming = try scratch.write("tilt = true\nfire = true\n", to: "arming.toml")
        let run = try SentryProcess(["--config", arming, "--camera", Self.astronaut, "--serial", "sim", "--frames", "1"])
        #expect(run.status != 0 && run.standardError.contains("arming.toml:2") && run.standardError.contains("arming is a command-line act"), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1, "\(run.standardError)")
        let config = try SentryProcess(["config", "--config", arming])
        #expect(config.status != 0 && config.standardError.contains("--fire arms the turret"), "\(config.standardError)")
        let doctor = try SentryProcess(["doctor", "--config", arming, "--serial", "sim"])
        #expect(doctor.standardOutput.contains("--fire arms the turret"), "\(doctor.standardOutput)")
        let panOnly = try scratch.write("pan-only-below-heads = true\n", to: "pan-only.toml")
        let refused = try SentryProcess(["--config", panOnly, "--camera", Self.astronaut, "--serial", "sim", "--frames", "1"])
        #expect(refused.status != 0 && refused.standardError.contains("pan-only.toml:1"), "\(refused.standardError)")
        let safe = try scratch.write("fire = false\nfire-below = 2\n", to: "safe.toml")
        let fine = try SentryProcess(["--config", safe, "--camera", Self.astronaut, "--serial", "sim", "--frames", "1", "--quiet"])
        #expect(fine.status == 0, "\(fine.standardError)")
    }
}
