import Foundation
import TestClips
import Testing

@Suite("Fuzz corpus replays (every crash libFuzzer ever found stays fixed)")
struct FuzzCorpusTests {
    @Test("each committed input runs through its fuzz target without a crash", arguments: ["cascade", "protocol", "model", "frames", "mqtt", "http"])
    func replay(target: String) throws {
        let corpus = DemoClip.repository.appendingPathComponent("Fuzz/corpus/\(target)")
        let inputs = try FileManager.default.contentsOfDirectory(atPath: corpus.path).map { corpus.appendingPathComponent($0).path }
        #expect(inputs.count >= 3)
        let process = Process()
        process.executableURL = Bundle.main.bundleURL.appendingPathComponent("fuzz-\(target)")
        process.arguments = inputs
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(text)")
        #expect(text.contains("replayed \(inputs.count) inputs"))
    }
}
