import Foundation
import TestClips
import Testing

/// Heap allocations per frame, counted by ordo-one's malloc interposer
/// (preloaded into `count-allocations`, which runs each per-frame path on
/// the demo clip: one pass to warm up, a second one counted).
@Suite("No heap allocations per frame once warm")
struct AllocationTests {
    @Test(
        "luma extraction, the worker pool's core choice, BlazeFace in colour from YUYV (every frame and with --detect-fps 8), (both models, one and two threads), the one-thread Haar and LBP detectors, --detect-fps with either, and --expressions (the mesh and what is read from it) allocate nothing"
    )
    func perFrame() throws {
        let build = Bundle.main.bundleURL
        let library = build.appendingPathComponent("libMallocInterposerSwift.so").path
        let process = Process()
        process.executableURL = build.appendingPathComponent("count-allocations")
        process.arguments = [DemoClip.path]
        process.environment = ProcessInfo.processInfo.environment.merging(["LD_PRELOAD": library]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count >= 2, let count = Int(words[1]) { counts[String(words[0])] = count }
        }
        #expect((counts["control"] ?? 0) >= 20, "the counter must see the control's allocations: \(text)")
        for path in [
            "luma-yuyv", "core-set", "blazeface-colour-yuyv", "blazeface-colour-detect-fps-8", "blazeface", "blazeface-short", "blazeface-2-threads", "haar",
            "lbp",
            "blazeface-detect-fps-8", "haar-detect-fps-8", "mesh-detect-fps-8", "mesh-expressions",
        ] {
            #expect(counts[path] == 0, "\(path): \(text)")
        }
        // Two Haar threads go through Dispatch, which allocates a few blocks per frame.
        #expect(counts["haar-2-threads"] != nil, "\(text)")
    }
}
