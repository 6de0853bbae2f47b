import Foundation
import TestClips
import Testing

@Suite("sentry --version")
struct VersionTests {
    @Test("prints VERSION and the commit it was built from, and exits 0")
    func version() throws {
        let run = try SentryProcess(["--version"])
        #expect(run.status == 0)
        let version =
            try String(contentsOf: DemoClip.repository.appendingPathComponent("VERSION"), encoding: .utf8)
            .split(separator: "\n").first.map(String.init) ?? ""
        let git = try SentryProcess(program: "/usr/bin/git", ["-C", DemoClip.repository.path, "rev-parse", "--short=7", "HEAD"])
        let commit = git.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(run.standardOutput == "\(version) (\(commit))\n", "\(run.standardOutput)")
    }
}
