import Foundation
import Scratch
import Testing
import TestClips
import Waiting

/// Who is it, through the binary: `sentry known` enrolling a household's
/// folder, `sentry faces --known` naming each face (Tests/Fixtures/people:
/// public domain White House photographs, see its SOURCES.md).
@Suite("Face recognition through the binary: enrolment by folders, a name for each face")
struct RecognitionTests {
    static let people = DemoClip.repository.appendingPathComponent("Tests/Fixtures/people")
    static let photos = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos")

    /// A household: obama (the portrait only), biden, a folder whose photo has no face and one whose photo has two.
    static func household() throws -> ScratchDirectory {
        let folder = try ScratchDirectory("known")
        for (person, photo, from) in [("obama", "portrait.jpg", people.appendingPathComponent("obama/portrait.jpg")),
                                      ("biden", "1.jpg", people.appendingPathComponent("biden/blue-room.jpg")),
                                      ("nobody", "cup.png", photos.appendingPathComponent("coffee.png"))] {
            try FileManager.default.createDirectory(at: folder.file(person), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: from, to: folder.file("\(person)/\(photo)"))
        }
        try FileManager.default.createDirectory(at: folder.file("pair"), withIntermediateDirectories: true)
        let pair = try SentryProcess(program: "/usr/bin/ffmpeg", [
            "-v", "error", "-i", people.appendingPathComponent("obama/portrait.jpg").path, "-i", people.appendingPathComponent("biden/blue-room.jpg").path,
            "-filter_complex", "hstack", "-frames:v", "1", folder.file("pair/both.jpg").path,
        ])
        try #require(pair.status == 0, "\(pair.standardError)")
        return folder
    }

    @Test("sentry known lists who is enrolled, names each photo left out with the fix, and reads again only what changed")
    func enrolment() throws {
        let folder = try Self.household()
        let first = try SentryProcess(["known", folder.path])
        #expect(first.status == 0, "\(first.standardError)")
        let lines = first.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(folder.path): 2 people, 2 photos used", "\(first.standardOutput)")
        #expect(lines.contains("  biden: 1 photo") && lines.contains("  obama: 1 photo"), "\(first.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("  nobody/cup.png: not used: no face found") }, "\(first.standardOutput)")
        #expect(lines.contains("  pair/both.jpg: not used: 2 faces: crop it to the one person"), "\(first.standardOutput)")
        #expect(FileManager.default.fileExists(atPath: folder.file(".sentry-known.json").path))

        let again = try SentryProcess(["known", folder.path])
        #expect(again.standardOutput.hasPrefix("\(folder.path): 2 people, 2 photos used (4 from .sentry-known.json)"), "\(again.standardOutput)")

        // A photo replaced: it is read again, and the person it now shows counts.
        try FileManager.default.removeItem(at: folder.file("nobody/cup.png"))
        try FileManager.default.copyItem(at: Self.people.appendingPathComponent("obama/blue-room.jpg"), to: folder.file("nobody/cup.png"))
        let changed = try SentryProcess(["known", folder.path])
        #expect(changed.standardOutput.hasPrefix("\(folder.path): 3 people, 3 photos used (3 from .sentry-known.json)"), "\(changed.standardOutput)")
        #expect(changed.standardOutput.contains("  nobody: 1 photo"), "\(changed.standardOutput)")
    }

    @Test("a photo of an enrolled person not among the enrolled photos is named; another face is a stranger")
    func naming() throws {
        let folder = try Self.household()
        let run = try SentryProcess([
            "faces", "--known", folder.path, "--json", Self.people.appendingPathComponent("obama/blue-room.jpg").path,
            Self.photos.appendingPathComponent("astronaut-colour.jpg").path,
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let reports = run.standardOutput.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let faces = reports.map { ($0?["faces"] as? [[String: Any]])?.first }
        #expect(faces.count == 2)
        // dlib's threshold is 0.6: the other photo of Obama lies well within it, the astronaut well beyond anyone.
        #expect(faces[0]?["name"] as? String == "obama", "\(run.standardOutput.prefix(300))")
        #expect((faces[0]?["distance"] as? Double ?? 1) < 0.45, "\(faces[0]?["distance"] ?? "none")")
        #expect(faces[1]?["name"] is NSNull, "\(run.standardOutput.suffix(300))")
        #expect((faces[1]?["distance"] as? Double ?? 0) > 0.7, "\(faces[1]?["distance"] ?? "none")")

        let line = try SentryProcess(["faces", "--known", folder.path, Self.photos.appendingPathComponent("astronaut-colour.jpg").path])
        #expect(line.standardOutput.contains(", a stranger (nearest: "), "\(line.standardOutput)")
    }

    @Test("a --known folder that is not there, or holds no photo, is one line and exit 1")
    func badFolders() throws {
        let missing = try SentryProcess(["known", "/nonexistent/household"])
        #expect(missing.status == 1)
        #expect(missing.standardError == "sentry: --known /nonexistent/household: no such folder; make one with a folder per person holding their photos (/nonexistent/household/alice/1.jpg)\n")
        let empty = try ScratchDirectory("known-empty")
        let none = try SentryProcess(["faces", "--known", empty.path, Self.photos.appendingPathComponent("astronaut.png").path])
        #expect(none.status == 1)
        #expect(none.standardError.hasPrefix("sentry: --known \(empty.path): holds no photos;") && none.standardError.split(separator: "\n").count == 1, "\(none.standardError)")
    }
}

extension RecognitionTests {
    /// A run on a photo of Obama (not the enrolled one) with `household`: the lock's record and its hook's environment.
    static func lockOnObama(household: String) throws -> (record: [String: Any], hook: String, log: String) {
        let scratch = try ScratchDirectory("known-run")
        let hookFile = scratch.file("person").path
        let run = try SentryProcess([
            "--camera", people.appendingPathComponent("obama/blue-room.jpg").path, "--loop", "--realtime", "--frames", "100", "--serial", "sim",
            "--quiet", "--known", household, "--events", scratch.file("events").path, "--on-event", "lock=printf %s \"$SENTRY_PERSON\" > \(hookFile)",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let day = try #require(try FileManager.default.contentsOfDirectory(atPath: scratch.file("events").path).first)
        let folder = scratch.file("events/\(day)")
        let lock = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix(".json") && $0.contains("-lock-") }, "\(run.standardError)")
        let record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(lock))) as? [String: Any])
        // The hook may still be writing when the run ends.
        var hook = ""
        _ = eventually {
            hook = (try? String(contentsOfFile: hookFile, encoding: .utf8)) ?? ""
            return !hook.isEmpty
        }
        return (record, hook, run.standardError)
    }

    @Test("a run with --known names the target in the log, the lock's record (person) and its hook (SENTRY_PERSON); another person is a stranger")
    func run() throws {
        let household = try Self.household()
        let obama = try Self.lockOnObama(household: household.path)
        #expect(obama.log.contains(#/notice sentry: \[SentryApp\] face \d+ is obama \(0\.\d\d from an enrolled photo\)/#), "\(obama.log)")
        #expect(obama.record["person"] as? String == "obama", "\(obama.record)")
        #expect(obama.hook == "obama")

        try FileManager.default.removeItem(at: household.file("obama"))
        let stranger = try Self.lockOnObama(household: household.path)
        #expect(stranger.log.contains(#/face \d+ is a stranger \(nearest: biden, 0\.\d\d\)/#), "\(stranger.log)")
        #expect(stranger.record["person"] as? String == "stranger", "\(stranger.record)")
        #expect(stranger.hook == "stranger")
    }

    @Test("--known on a folder where nobody can be enrolled stops the run before it starts, in one line")
    func runWithNobody() throws {
        let folder = try ScratchDirectory("known-nobody")
        try FileManager.default.createDirectory(at: folder.file("cup"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.photos.appendingPathComponent("coffee.png"), to: folder.file("cup/1.png"))
        let run = try SentryProcess(["--camera", Self.photos.appendingPathComponent("astronaut.png").path, "--serial", "sim", "--known", folder.path])
        #expect(run.status == 1)
        #expect(run.standardError == "sentry: --known \(folder.path): no photo in it has exactly one face; sentry known \(folder.path) says why for each\n")
    }
}

extension RecognitionTests {
    @Test("--fire --spare known: no shot at one of the household, and the status says why; a stranger is shot at")
    func spareKnown() throws {
        let household = try Self.household()
        let armed = [
            "--camera", Self.people.appendingPathComponent("obama/blue-room.jpg").path, "--loop", "--realtime", "--frames", "100", "--serial", "sim",
            "--known", household.path, "--spare", "known", "--fire", "--tilt", "--lock-after", "0.5", "--fire-cooldown", "1",
        ]
        let spared = try SentryProcess(armed)
        #expect(spared.status == 0, "\(spared.standardError)")
        #expect(spared.standardOutput.contains(", 0 shots fired"), "\(spared.standardOutput)")
        #expect(spared.standardError.contains("ARMED · Locked, holding fire: one of the household (--spare known) · obama — X: "), "\(spared.standardError)")

        try FileManager.default.removeItem(at: household.file("obama"))
        let stranger = try SentryProcess(armed)
        #expect(stranger.status == 0, "\(stranger.standardError)")
        #expect(!stranger.standardOutput.contains(", 0 shots fired") && stranger.standardOutput.contains(" shots fired"), "\(stranger.standardOutput)")
        #expect(stranger.standardError.contains("ARMED · Locked · stranger — X: "), "\(stranger.standardError)")
    }

    @Test("--fire --spare NAME: no shot at that person, shots at the rest of the household; a name nobody has is refused in one line")
    func spareByName() throws {
        let household = try Self.household()
        let armed = { (name: String) in
            [
                "--camera", Self.people.appendingPathComponent("obama/blue-room.jpg").path, "--loop", "--realtime", "--frames", "100", "--serial", "sim",
                "--known", household.path, "--spare", name, "--fire", "--tilt", "--lock-after", "0.5", "--fire-cooldown", "1",
            ]
        }
        let spared = try SentryProcess(armed("obama"))
        #expect(spared.status == 0, "\(spared.standardError)")
        #expect(spared.standardOutput.contains(", 0 shots fired"), "\(spared.standardOutput)")
        #expect(spared.standardError.contains("ARMED · Locked, holding fire: spared by name (--spare NAME) · obama — X: "), "\(spared.standardError)")

        let other = try SentryProcess(armed("biden"))
        #expect(other.status == 0, "\(other.standardError)")
        #expect(!other.standardOutput.contains(", 0 shots fired") && other.standardOutput.contains(" shots fired"), "\(other.standardOutput)")
        #expect(other.standardError.contains("ARMED · Locked · obama — X: "), "\(other.standardError)")

        let nobody = try SentryProcess(armed("carol"))
        #expect(nobody.status == 1)
        #expect(
            nobody.standardError
                == "sentry: --spare carol: nobody called carol is enrolled in \(household.path) (enrolled: biden, obama); give an enrolled name, or add \(household.path)/carol/ with their photos\n")
        let unknown = try SentryProcess(["--camera", Self.photos.appendingPathComponent("astronaut.png").path, "--serial", "sim", "--spare", "smiel"])
        #expect(unknown.status == 64)
        #expect(unknown.standardError.hasPrefix("Error: --spare smiel is no expression (smile, "), "\(unknown.standardError)")
        #expect(unknown.standardError.split(separator: "\n").count == 1)
    }

    @Test(
        "--target unknown follows the stranger beside a larger face of the household, and --fire --spare known shoots at it; without it the household's face is the target, and no shot goes"
    )
    func targetUnknown() throws {
        let household = try ScratchDirectory("known")
        try FileManager.default.createDirectory(at: household.file("obama"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.people.appendingPathComponent("obama/portrait.jpg"), to: household.file("obama/portrait.jpg"))
        let armed = [
            "--camera", Clips.obamaBesideBiden, "--loop", "--realtime", "--frames", "100", "--serial", "sim", "--known", household.path,
            "--spare", "known", "--fire", "--tilt", "--lock-after", "0.5", "--fire-cooldown", "1", "--log-level", "info",
        ]
        let stranger = try SentryProcess(armed + ["--target", "unknown"])
        #expect(stranger.status == 0, "\(stranger.standardError)")
        #expect(stranger.standardError.contains(#/face \d+ is a stranger \(nearest: obama, 0\.\d\d\)/#), "\(stranger.standardError)")
        #expect(stranger.standardError.contains("ARMED · Locked · stranger — X: 1"), "\(stranger.standardError)")
        #expect(!stranger.standardOutput.contains(", 0 shots fired") && stranger.standardOutput.contains(" shots fired"), "\(stranger.standardOutput)")

        let largest = try SentryProcess(armed)
        #expect(largest.status == 0, "\(largest.standardError)")
        #expect(largest.standardError.contains("ARMED · Locked, holding fire: one of the household (--spare known) · obama — X: "), "\(largest.standardError)")
        #expect(largest.standardOutput.contains(", 0 shots fired"), "\(largest.standardOutput)")

        let alone = try SentryProcess(["--camera", Self.photos.appendingPathComponent("astronaut.png").path, "--serial", "sim", "--target", "unknown"])
        #expect(alone.status == 64)
        #expect(alone.standardError.hasPrefix("Error: --target unknown follows strangers before the household --known enrols: add --known DIR"), "\(alone.standardError)")
    }

    @Test("--spare known without --known is refused in one line")
    func spareKnownNeedsKnown() throws {
        let run = try SentryProcess(["--camera", Self.photos.appendingPathComponent("astronaut.png").path, "--serial", "sim", "--spare", "known"])
        #expect(run.status == 64)
        #expect(run.standardError.hasPrefix("Error: --spare known holds fire at the household --known enrols: add --known DIR"), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1)
    }
}
