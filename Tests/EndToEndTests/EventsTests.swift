import Foundation
import Scratch
import TestClips
import Testing

/// `--events DIR`: each lock, loss, shot and arrival kept with its pictures.
@Suite("Events kept with their pictures, through the binary")
struct EventsTests {
    struct Record: Decodable {
        struct Box: Decodable { var x, y, width, height: Int }
        var id: String
        var kind: String
        var frame: Int
        var frameTime: Double
        var box: Box
        var expression: String?
        var score: Double?
        var armed: Bool?
    }

    /// Every whole event in `directory`: its record, and the paths of its pictures.
    static func events(in directory: String) throws -> [(record: Record, frame: String, face: String)] {
        let days = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        return try days.flatMap { day in
            try FileManager.default.contentsOfDirectory(atPath: directory + "/" + day).filter { $0.hasSuffix(".json") }.sorted().map { file in
                let base = directory + "/" + day + "/" + file.dropLast(5)
                let record = try JSONDecoder().decode(Record.self, from: Data(contentsOf: URL(fileURLWithPath: base + ".json")))
                return (record, base + ".jpg", base + "-face.jpg")
            }
        }
    }

    @Test("the demo run keeps an arrival and a lock: records that match, the frame whole, the face in its crop (BlazeFace finds one covering most of it)")
    func recordsWithPictures() throws {
        let scratch = try ScratchDirectory("events")
        let folder = scratch.file("events").path
        let run = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--quiet", "--events", folder])
        #expect(run.status == 0, "\(run.standardError)")
        let events = try Self.events(in: folder)
        let kinds = Set(events.map(\.record.kind))
        #expect(kinds.isSuperset(of: ["arrive", "lock"]), "\(kinds)")
        #expect(events.allSatisfy { $0.record.armed == false }, "an unarmed run's records say so")
        for event in events { try Self.expectWhole(event) }
        // sentry events lists them, and --since leaves out what came before.
        let listed = try SentryProcess(["events", "--events", folder, "--json"])
        let ids = listed.standardOutput.split(separator: "\n").compactMap { line -> String? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (object?["record"] as? [String: Any])?["id"] as? String
        }
        #expect(ids == events.map(\.record.id), "\(listed.standardOutput)")
        #expect(try SentryProcess(["events", "--events", folder, "--since", "2999-01-01"]).standardOutput.isEmpty)
        #expect(try SentryProcess(["events", "--events", folder, "--since", "1h"]).standardOutput.split(separator: "\n").count == events.count)
        for bad in ["", "T", "yesterday"] {
            let refused = try SentryProcess(["events", "--events", folder, "--since", bad])
            #expect(refused.status == 64 && refused.standardError.contains("--since"), "'\(bad)': \(refused.status) \(refused.standardError)")
        }
        // Nothing half-written is left behind.
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.contains(".tmp") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// The event's record names it, its frame is a whole JPEG, and its face crop is
    /// at least 128 px with one face covering most of it (BlazeFace, through `sentry faces`).
    static func expectWhole(_ event: (record: Record, frame: String, face: String)) throws {
        #expect(event.record.id.contains("-\(event.record.kind)-\(event.record.frame)"), "\(event.record.id)")
        let frame = try Data(contentsOf: URL(fileURLWithPath: event.frame))
        #expect(frame.prefix(2) == Data([0xFF, 0xD8]) && frame.suffix(2) == Data([0xFF, 0xD9]), "\(event.frame) is no whole JPEG")
        let faces = try SentryProcess(["faces", "--json", event.face])
        let reading = try #require(try JSONSerialization.jsonObject(with: Data(faces.standardOutput.utf8)) as? [String: Any])
        let (width, height) = (reading["width"] as? Int ?? 0, reading["height"] as? Int ?? 0)
        #expect(max(width, height) >= 128, "\(event.face): \(width)x\(height)")
        let found = reading["faces"] as? [[String: Any]] ?? []
        #expect(found.count == 1, "\(event.face): \(found.count) faces")
        if let box = found.first?["box"] as? [Double] {
            #expect(box[2] * box[3] > 0.2 * Double(width * height), "the face is small in its crop: \(box) in \(width)x\(height)")
        }
    }

    @Test("shots (--fire) and a held smile (--on-expression, two rules firing on one frame) are kept with the face, each its own event; a hook that deletes its pictures does not hurt the next event")
    func shotsAndSmiles() throws {
        let scratch = try ScratchDirectory("events-shots")
        let folder = scratch.file("events").path
        let seen = scratch.file("seen.txt").path
        let lockHook = "test -s \"$SENTRY_SNAPSHOT\" && test -s \"$SENTRY_FACE\" && echo \"$SENTRY_EVENT_ID\" >> \(seen); rm -f \"$SENTRY_SNAPSHOT\" \"$SENTRY_FACE\""
        let run = try SentryProcess(
            ExpressionRunTests.clipArguments + [
                "--quiet", "--fire", "--pan-only-below-heads", "--fire-cooldown", "1", "--on-expression", "smile:1=true", "--on-expression", "smile:1=true", "--on-lock", lockHook, "--events", folder,
            ])
        #expect(run.status == 0, "\(run.standardError)")
        let events = try Self.events(in: folder)
        let count = { (kind: String) in events.filter { $0.record.kind == kind }.count }
        #expect(count("shot") == 2 && count("expression") == 4 && count("lock") == 2 && count("lost") == 2, "\(events.map(\.record.id))")
        #expect(Set(events.map(\.record.id)).count == events.count, "two events share an id: \(events.map(\.record.id))")
        #expect(events.allSatisfy { $0.record.armed == true }, "an armed run's records say so")
        for event in events where event.record.kind == "expression" {
            #expect(event.record.expression == "smile" && (event.record.score ?? 0) >= 0.6, "\(event.record)")
            #expect([1.0, 3.5].contains(event.record.frameTime), "the smile held 1 s at \(event.record.frameTime)")
        }
        for event in events where ["shot", "expression"].contains(event.record.kind) { try Self.expectWhole(event) }
        // Both locks' hooks found their pictures, though the first deleted its own.
        let hooked = ((try? String(contentsOfFile: seen, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        #expect(hooked == events.filter { $0.record.kind == "lock" }.map(\.record.id), "\(hooked)")
    }

    @Test(
        "a full disk (a 1 MB tmpfs): one line, the run goes on to its last frame, no partial files and no event without its pictures",
        .enabled(if: getuid() == 0, "mounting a tmpfs needs root")
    )
    func fullDisk() throws {
        let scratch = try ScratchDirectory("events-tmpfs")
        let disk = scratch.file("disk").path
        let folder = disk + "/events"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mount = try SentryProcess(program: "/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk])
        try #require(mount.status == 0, "tmpfs cannot be mounted here: \(mount.standardError)")
        defer { _ = try? SentryProcess(program: "/bin/umount", [disk]) }
        // Room for about one event: the first fits, later ones do not.
        #expect(FileManager.default.createFile(atPath: disk + "/filler", contents: Data(count: 1_000_000 - 40_000)))
        let run = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--quiet", "--realtime", "--events", folder])
        #expect(run.status == 0 && run.standardOutput.contains("100 frames"), "\(run.standardError)")
        let complaints = run.standardError.split(separator: "\n").filter { $0.contains("events:") }
        #expect(complaints.count == 1 && complaints[0].contains("No space left on device"), "\(complaints)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder)
        #expect(files.allSatisfy { !$0.contains(".tmp") }, "\(files)")
        for event in try Self.events(in: folder) {
            #expect(FileManager.default.fileExists(atPath: event.frame) && FileManager.default.fileExists(atPath: event.face), "\(event.record.id)")
        }
    }

    @Test("--events-keep 2 keeps the two newest events")
    func keepsTheNewest() throws {
        let scratch = try ScratchDirectory("events-keep")
        let folder = scratch.file("events").path
        let all = scratch.file("all").path
        _ = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--quiet", "--events", all])
        let run = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--quiet", "--events", folder, "--events-keep", "2"])
        #expect(run.status == 0, "\(run.standardError)")
        let everything = try Self.events(in: all).map { "\($0.record.kind)-\($0.record.frame)" }
        let kept = try Self.events(in: folder).map { "\($0.record.kind)-\($0.record.frame)" }
        #expect(everything.count > 2 && kept.count == 2, "\(kept) of \(everything)")
        #expect(Set(kept).isSubset(of: everything))
    }

    @Test("a folder that cannot be written: refused at start with one line; one that fills: one line, the run goes on, no partial files")
    func unwritable() throws {
        let refused = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--quiet", "--events", "/proc/sentry-events"])
        #expect(refused.status != 0 && refused.standardError.contains("events folder /proc/sentry-events"), "\(refused.standardError)")
        // A day's folder that cannot be made after the start (a file holds its name, as a full or
        // read-only disk refuses): events are skipped with one line, the run ends normally.
        let scratch = try ScratchDirectory("events-full")
        let folder = scratch.file("events").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let day = folder + "/" + Self.today
        #expect(FileManager.default.createFile(atPath: day, contents: Data("not a folder".utf8)))
        let run = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--quiet", "--events", folder])
        #expect(run.status == 0 && run.standardOutput.contains("100 frames"), "\(run.standardError)")
        let complaints = run.standardError.split(separator: "\n").filter { $0.contains("events:") }
        #expect(complaints.count == 1, "\(complaints)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [Self.today])
    }

    @Test("a hook sees the frame and the face as whole JPEGs before it starts, named by the event --events keeps; they are gone after it")
    func hookPictures() throws {
        let scratch = try ScratchDirectory("events-hook")
        let folder = scratch.file("events").path
        let seen = scratch.file("seen.txt").path
        // The hook decodes both pictures (OpenCV, as tools/setup installs it) and says what it found.
        let decode = #"import cv2, os; f = cv2.imread(os.environ['SENTRY_SNAPSHOT']); c = cv2.imread(os.environ['SENTRY_FACE']); print(os.environ['SENTRY_EVENT_ID'], f.shape[1], f.shape[0], c.shape[1], c.shape[0], os.environ['SENTRY_SNAPSHOT'])"#
        let run = try SentryProcess([
            "--camera", DemoClip.path, "--serial", "sim", "--quiet", "--events", folder, "--on-lock", "python3 -c \"\(decode)\" >> \(seen)",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = ((try? String(contentsOfFile: seen, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.split(separator: " ") }
        #expect(!lines.isEmpty, "the hook saw nothing: \(run.standardError)")
        let kept = Set(try Self.events(in: folder).map(\.record.id))
        for line in lines {
            #expect(line.count == 6 && line[1] == "640" && line[2] == "480", "\(line)")
            #expect(line.count == 6 && (Int(line[3]) ?? 0) >= 128, "\(line)")
            #expect(kept.contains(String(line[0])), "\(line[0]) is not among the kept events \(kept)")
            #expect(!FileManager.default.fileExists(atPath: String(line.last ?? "")), "the hook's picture outlived it")
        }
    }

    static var today: String {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date())
    }
}
