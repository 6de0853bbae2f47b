import Foundation
import Scratch
import TestClips
import Testing

@Suite("The settings file through the real binary: merge and bad files")
struct ConfigCommandTests {
    let scratch: ScratchDirectory

    init() throws { scratch = try ScratchDirectory("config") }

    /// A settings file of `text`: its path.
    func file(_ text: String) throws -> String { try scratch.write(text, to: "sentry-\(UUID().uuidString).toml") }

    /// `sentry config` rows: key → (value, source).
    static func rows(_ output: String) -> [String: (value: String, source: String)] {
        var rows: [String: (String, String)] = [:]
        for line in output.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count == 3 { rows[String(fields[0])] = (String(fields[1]), String(fields[2])) }
        }
        return rows
    }

    @Test("defaults, the file and flags: a flag wins over the file, the file over the default, and each says where it came from")
    func mergeTable() throws {
        let path = try file("# hall turret\noffset = 30\ntilt = true\nserial = \"auto\"\nlost-after = 0.5\nsearch = \"last-seen\"\n")
        let run = try SentryProcess(["config", "--config", path, "--offset", "35", "--no-tilt", "--fov", "70"])
        #expect(run.status == 0, "\(run.standardError)")
        let rows = Self.rows(run.standardOutput)
        #expect(run.standardOutput.hasPrefix("config file: \(path)\n"))
        #expect(rows["offset"]! == ("35", "flag"))  // flag over file
        #expect(rows["tilt"]! == ("false", "flag"))  // --no-tilt over tilt = true
        #expect(rows["serial"]! == ("auto", "\(path):4"))  // file over default
        #expect(rows["lost-after"]! == ("0.5", "\(path):5"))
        #expect(rows["search"]! == ("last-seen", "\(path):6"))
        #expect(rows["fov"]! == ("70", "flag"))  // flag over default
        #expect(rows["kp"]! == ("0.7", "default"))
        #expect(rows["fire"]! == ("false", "default"))
        #expect(rows["camera"]! == ("-", "default"))
    }

    @Test("what a run takes, not only what was typed: --spare turns the expressions on, and the detector is the one a run picks")
    func implied() throws {
        let run = try SentryProcess(["config", "--spare", "smile"])
        let lines = run.standardOutput.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(lines.contains("expressions true turned on by --spare smile"), "\(run.standardOutput)")
        #expect(lines.contains("detector blazeface default (its model is installed)"))
    }

    @Test("sentry alone prints its help and how to start, and exits 0")
    func alone() throws {
        let run = try SentryProcess([], environment: ["XDG_CONFIG_HOME": "/nonexistent"])
        #expect(run.status == 0 && run.standardError.isEmpty, "\(run.standardError)")
        #expect(run.standardOutput.hasPrefix("OVERVIEW:") && run.standardOutput.contains("To start: sentry --camera"))
    }

    @Test("a run reads the file: its settings act, and a flag still wins")
    func runUsesFile() throws {
        let photo = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png").path
        let path = try file("camera = \"\(photo)\"\nserial = \"sim\"\nframes = 1\nquiet = true\noffset = 10\n")
        let fromFile = try SentryProcess(["--config", path])
        #expect(fromFile.status == 0, "\(fromFile.standardError)")
        // The face is at x ≈ 226 of 512: offset 10 maps it to 10 + 160·226/512 ≈ 80°.
        #expect(fromFile.standardOutput.contains("final pan 80"), "\(fromFile.standardOutput)")
        let flagWins = try SentryProcess(["--config", path, "--offset", "40"])
        #expect(flagWins.standardOutput.contains("final pan 84"), "\(flagWins.standardOutput)")
        // XDG_CONFIG_HOME's file is read without --config.
        let xdg = scratch.file("xdg")
        try FileManager.default.createDirectory(at: xdg.appendingPathComponent("sentry"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: path, toPath: xdg.appendingPathComponent("sentry/sentry.toml").path)
        let found = try SentryProcess([], environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(found.standardOutput.contains("final pan 80"), "\(found.standardError)")
    }

    @Test(
        "every bad file: one line naming the file (and line and key), exit 1, nothing run",
        arguments: [
            ("offset = 95\n", ":1: offset: --offset 95 must be between 0 and 89"),
            ("offset = 40\nofset = 30\n", ":2: ofset: unknown key"),
            ("tilt = \"yes\"\n", ":1: tilt: expected true or false, got yes"),
            ("offset = \"abc\"\n", ":1: offset: The value 'abc' is invalid"),
            ("fire-cooldown = nan\n", ":1: fire-cooldown: --fire-cooldown nan"),
            ("on-lock = \"\"\n", ":1: on-lock: --on-lock needs a shell command"),
            ("search = \"last-seen\"\n", ":1: search: --search last-seen needs --lost-after"),
            ("offset = 30\n[turret]\nfov = 60\n", ":2: turret: expected one value"),
            ("this is not toml\n", ":1: not valid TOML"),
            ("config = \"/etc/other.toml\"\n", ":1: config: unknown key"),
        ])
    func badFile(text: String, words: String) throws {
        let path = try file(text)
        let run = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--config", path])
        #expect(run.status == 1, "\(run.standardError)")
        #expect(run.standardError == "sentry: config \(path)\(words)" + run.standardError.dropFirst("sentry: config \(path)\(words)".count))
        #expect(run.standardError.split(separator: "\n").count == 1, "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }

    @Test("a missing file, an unreadable one (as an unprivileged user), an empty --config")
    func missingAndUnreadable() throws {
        let missing = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--config", "/nonexistent/sentry.toml"])
        #expect(missing.status == 1 && missing.standardError.hasPrefix("sentry: config /nonexistent/sentry.toml: no such file"))
        let locked = try file("offset = 30\n")
        chmod(locked, 0)
        let unreadable =
            getuid() == 0
            ? try SentryProcess(
                program: "/usr/bin/setpriv",
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups", SentryProcess.executable,
                    "--camera", DemoClip.path, "--serial", "sim", "--config", locked,
                ])
            : try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--config", locked])
        #expect(unreadable.status == 1 && unreadable.standardError.contains("cannot be read (permission denied)"), "\(unreadable.standardError)")
        let empty = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--config", ""])
        #expect(empty.status == 1 && empty.standardError.hasPrefix("sentry: --config needs a file path"), "\(empty.standardError)")
    }
}
