import Foundation
import TestClips
import Testing

/// The load of issue 37 on the real binary (tools/web-load, short phases): the
/// figures themselves (the loop's p99 against idle) go to docs/PERFORMANCE.md;
/// this holds what must never change: both processes live, every client told,
/// descriptors and memory bounded.
@Suite("the console and the relay under a flood of bad clients", .serialized)
struct WebLoadTests {
    @Test("1,000 half-open, 200 slow-header, 50 never-reading and oversized clients: sentry and the relay live, each client gets a status, descriptors return")
    func flood() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", DemoClip.repository.appendingPathComponent("tools/web-load").path, SentryProcess.executable, "4", "--json"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let figures = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        #expect(figures["alive"] as? Bool == true)
        let outcomes = try #require(figures["outcomes"] as? [String: [String: Int]])
        #expect(outcomes.count == 9)
        for (kind, ended) in outcomes {
            #expect(ended["dropped"] == nil, "\(kind): \(ended)")
            let statuses = Set(ended.keys.map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(statuses.isSubset(of: ["HTTP/1.1 503", "HTTP/1.1 408", "HTTP/1.1 413", "HTTP/1.1 431"]), "\(kind): \(ended)")
        }
        let processes = try #require(figures["processes"] as? [String: [String: Double]])
        for (name, figures) in processes {
            let idle = figures["fds_idle"] ?? 0, peak = figures["fds_peak"] ?? .infinity, after = figures["fds_after"] ?? .infinity
            // Each face holds at most 8 clients: the descriptors never grow past them, and go back.
            #expect(peak <= idle + 10 && after <= idle + 1, "\(name): \(figures)")
            #expect((figures["rss_mb"] ?? .infinity) < 100, "\(name): \(figures)")
        }
        let load = try #require(figures["load"] as? [String: Double])
        #expect((load["frames"] ?? 0) > 0)
    }
}
