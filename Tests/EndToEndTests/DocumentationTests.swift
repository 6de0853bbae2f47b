import Foundation
import Scratch
import TestClips
import Testing

/// A command block the docs mark as runnable without hardware: `<!-- doc-test -->`
/// (or `<!-- doc-test: exit N -->`) before an indented code block, each of whose
/// lines is run by `sh` and must exit with the status given (0 unless said).
struct DocumentedCommands: CustomStringConvertible {
    var page: String
    var status: Int32
    var lines: [String]

    var description: String { "\(page): \(lines.first ?? "")" }

    /// Every marked block in the README and the pages under docs/.
    static func all() throws -> [DocumentedCommands] {
        let root = DemoClip.repository
        let folder = root.appendingPathComponent("docs")
        let pages = ["README.md"]
            + (FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".md") }.map { "docs/\($0)" } ?? [])
        let marker = #/<!-- doc-test(?:: exit (\d+))? -->/#
        var blocks: [DocumentedCommands] = []
        for page in pages.sorted() {
            let lines = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() {
                guard let match = line.wholeMatch(of: marker) else { continue }
                let code = lines[(index + 1)...].drop { $0.isEmpty }.prefix { $0.hasPrefix("    ") }.map { String($0.dropFirst(4)) }
                blocks.append(DocumentedCommands(page: page, status: match.1.flatMap { Int32($0) } ?? 0, lines: code))
            }
        }
        return blocks
    }
}

@Suite("the docs say what the program does: their marked commands run as documented, and the option tables are the commands' own")
struct DocumentationTests {
    @Test("every marked command line in the README and docs/ exits as documented (photo.jpg, other.png and clip.mp4 beside it)")
    func commands() throws {
        let blocks = try DocumentedCommands.all()
        #expect(blocks.count >= 3 && blocks.allSatisfy { !$0.lines.isEmpty }, "\(blocks)")
        let scratch = try ScratchDirectory("doc-commands")
        let photos = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos")
        try FileManager.default.copyItem(at: photos.appendingPathComponent("astronaut-colour.jpg"), to: scratch.file("photo.jpg"))
        try FileManager.default.copyItem(at: photos.appendingPathComponent("astronaut.png"), to: scratch.file("other.png"))
        try FileManager.default.copyItem(atPath: DemoClip.path, toPath: scratch.file("clip.mp4").path)
        let folder = (SentryProcess.executable as NSString).deletingLastPathComponent
        for block in blocks {
            for line in block.lines {
                let run = try SentryProcess(
                    program: "/bin/sh", ["-c", "cd '\(scratch.path)' && \(line)"],
                    environment: ["PATH": folder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? ""), "XDG_CONFIG_HOME": scratch.file("config").path])
                #expect(run.status == block.status, "\(block.page): \(line) exited \(run.status): \(run.standardError.suffix(300))")
            }
        }
    }

    @Test("running.md's option tables are what the commands define (tools/option-tables --check)")
    func optionTables() throws {
        let root = DemoClip.repository
        let run = try SentryProcess(
            program: "/usr/bin/env",
            ["python3", root.appendingPathComponent("tools/option-tables").path, SentryProcess.executable, root.appendingPathComponent("docs/guide/running.md").path, "--check"])
        #expect(run.status == 0, "\(run.standardError)")
    }

    @Test("the lines the guides send a user to look for are printed at the default log level: the console's address, the lock, the frame loop's cost")
    func linesTheGuidesName() throws {
        let run = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--quiet", "--web", "0", "--frames", "60"])
        #expect(run.status == 0, "\(run.standardError)")
        // console.md, lock-and-fire.md, troubleshooting.md and raspberry-pi.md name these.
        for line in [#/web console on http://127\.0\.0\.1:\d+//#, #/target locked at /#, #/frame loop: 60 frames, work per frame [\d.]+ ms median/#] {
            #expect(run.standardError.contains(line), "\(run.standardError)")
        }
    }

    @Test("'test on a photo' (safety.md, first-turret.md): a JPEG given --loop plays as many frames as asked, as a PNG does")
    func loopedPhoto() throws {
        let photos = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos")
        for photo in ["astronaut-colour.jpg", "astronaut.png"] {
            let run = try SentryProcess(["--camera", photos.appendingPathComponent(photo).path, "--loop", "--frames", "100", "--serial", "sim", "--quiet"])
            #expect(run.status == 0 && run.standardOutput.contains("100 frames"), "\(photo): \(run.standardOutput) \(run.standardError)")
        }
    }
}
