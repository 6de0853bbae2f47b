import Config
import Foundation
import Scratch
import Testing

@Suite("The settings file: TOML whose keys are the long flag names")
struct ConfigFileTests {
    static let catalog = FlagCatalog(
        options: ["offset", "camera", "lost-after", "search", "on-expression"], switches: ["tilt", "fire"], repeatable: ["on-expression"])

    @Test("entries keep their lines, and become the arguments they stand for")
    func arguments() throws {
        let file = try ConfigFile(
            path: "sentry.toml",
            text: """
                # the turret in the hall
                camera = "/dev/video0"

                offset = 30
                  tilt = true
                fire = false
                "lost-after" = 0.5
                """)
        #expect(file.entries.map(\.key) == ["camera", "offset", "tilt", "fire", "lost-after"])
        #expect(file.entries.map(\.line) == [2, 4, 5, 6, 7])
        let arguments = try file.arguments(for: Self.catalog).flatMap(\.arguments)
        #expect(arguments == ["--camera", "/dev/video0", "--offset", "30", "--tilt", "--no-fire", "--lost-after", "0.5"])
    }

    @Test("a list of texts gives a repeatable flag once per text")
    func lists() throws {
        let file = try ConfigFile(path: "s.toml", text: "on-expression = [\"smile:2=./ring.sh\", \"wink-left=./next.sh\"]\n")
        #expect(file.entries.first?.value == .list(["smile:2=./ring.sh", "wink-left=./next.sh"]))
        let arguments = try file.arguments(for: Self.catalog).flatMap(\.arguments)
        #expect(arguments == ["--on-expression", "smile:2=./ring.sh", "--on-expression", "wink-left=./next.sh"])
    }

    @Test(
        "bad files: one line naming the file, the line and the key",
        arguments: [
            ("offset = 30\nofset = 31\n", "config s.toml:2: ofset: unknown key"),
            ("tilt = 1\n", "config s.toml:1: tilt: expected true or false, got 1"),
            ("offset = true\n", "config s.toml:1: offset: expected a value, got true"),
            ("[turret]\nfov = 60\n", "config s.toml:1: turret: expected one value"),
            ("offset = [30, 40]\n", "config s.toml:1: offset: expected one value"),
            ("offset = [\"30\", \"40\"]\n", "config s.toml:1: offset: takes one value, not a list"),
            ("on-expression = [\"smile=x\", 2]\n", "config s.toml:1: on-expression: expected one value"),
            ("offset = 30\noffset =\n", "config s.toml:2: not valid TOML"),
            ("offset = 30\noffset = 31\n", "config s.toml:2: not valid TOML"),
            ("\u{7F}ELF", "config s.toml:1: not valid TOML"),
        ])
    func badFiles(text: String, message: String) {
        #expect {
            _ = try ConfigFile(path: "s.toml", text: text).arguments(for: Self.catalog)
        } throws: { error in
            let description = (error as? ConfigError)?.description ?? ""
            return description.hasPrefix(message) && !description.contains("\n")
        }
    }

    @Test("a missing file, a directory, and text that is not UTF-8")
    func unreadable() throws {
        #expect(throws: ConfigError("config /nonexistent.toml: no such file; create it (keys are the long flag names, e.g. offset = 40) or drop --config")) {
            try ConfigFile(path: "/nonexistent.toml")
        }
        #expect { try ConfigFile(path: "/tmp") } throws: { ($0 as? ConfigError)?.description.contains("is a directory") == true }
        let scratch = try ScratchDirectory("config")
        let binary = scratch.file("binary.toml")
        try Data([0x6F, 0x3D, 0xFF, 0xFE]).write(to: binary)
        #expect { try ConfigFile(path: binary.path) } throws: { ($0 as? ConfigError)?.description.contains("not UTF-8") == true }
    }

    @Test("where the file is looked for: --config, then XDG_CONFIG_HOME (or ~/.config), then /etc")
    func locate() throws {
        let scratch = try ScratchDirectory("home")
        let home = scratch.url
        #expect(ConfigFile.locate(explicit: "/x.toml", environment: [:]) == "/x.toml")
        let xdg = home.appendingPathComponent("xdg/sentry")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        try "offset = 30\n".write(to: xdg.appendingPathComponent("sentry.toml"), atomically: true, encoding: .utf8)
        #expect(
            ConfigFile.locate(explicit: nil, environment: ["XDG_CONFIG_HOME": home.path + "/xdg", "HOME": "/nonexistent"])
                == xdg.appendingPathComponent("sentry.toml").path)
        let dotConfig = home.appendingPathComponent(".config/sentry")
        try FileManager.default.createDirectory(at: dotConfig, withIntermediateDirectories: true)
        try "offset = 30\n".write(to: dotConfig.appendingPathComponent("sentry.toml"), atomically: true, encoding: .utf8)
        #expect(ConfigFile.locate(explicit: nil, environment: ["HOME": home.path]) == dotConfig.appendingPathComponent("sentry.toml").path)
        let fallback = ConfigFile.locate(explicit: nil, environment: ["HOME": "/nonexistent"])
        #expect(fallback == (FileManager.default.fileExists(atPath: ConfigFile.systemPath) ? ConfigFile.systemPath : nil))
    }
}
