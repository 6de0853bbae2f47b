import Config
import Foundation
import Scratch
import Testing

@Suite("writing the settings file (the console's Save)")
struct ConfigFileWriteTests {
    @Test("a key's line is replaced where it is set, others appended; comments and other lines stay; it reads back")
    func updating() throws {
        let text = "# turret in the hall\noffset = 40   # was 40\n\"tilt\" = false\ncamera = \"/dev/video0\"\n"
        let updated = ConfigFile.updating(
            text,
            with: [
                ("offset", .integer(25)), ("tilt", .bool(true)), ("lost-after", .number(0.5)),
                ("detector", .string("haar \"q\"\\")),
            ])
        #expect(updated == "# turret in the hall\noffset = 25\ntilt = true\ncamera = \"/dev/video0\"\nlost-after = 0.5\ndetector = \"haar \\\"q\\\"\\\\\"\n")
        let file = try ConfigFile(path: "x.toml", text: updated)
        #expect(file.entries.map(\.key) == ["offset", "tilt", "camera", "lost-after", "detector"])
        #expect(file.entries.last?.value == .string("haar \"q\"\\"))
        #expect(ConfigFile.updating("", with: [("offset", .integer(3))]) == "offset = 3\n")
    }

    @Test("write creates the file and its directory; an unwritable place is one line naming the file")
    func write() throws {
        let scratch = try ScratchDirectory("write")
        let path = scratch.file("sentry/sentry.toml").path
        try ConfigFile.write([("offset", .integer(30))], to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "offset = 30\n")
        try ConfigFile.write([("deadband", .integer(2))], to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "offset = 30\ndeadband = 2\n")
        #expect {
            try ConfigFile.write([("offset", .integer(1))], to: "/proc/sentry-no/sentry.toml")
        } throws: { error in
            "\(error)".contains("config /proc/sentry-no/sentry.toml: cannot be written")
        }
    }
}
