import Foundation
import Glibc
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

    @Test("400 clients connecting while the relay is stopped wait in the kernel's queue; once it runs, all past its limit are answered 503")
    func burstWaitsInQueue() throws {
        let relay = try RunningRelay()
        #expect(relay.process.isRunning)
        relay.process.suspend()
        let burst = (0..<400).map { _ in NonBlockingClient(port: relay.port) }
        defer { for client in burst { client.close() } }
        // Handshakes into a listening queue need no help from the process: the kernel
        // completes them at once, unless the queue is full and it drops the SYNs.
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline, !burst.allSatisfy(\.isConnected) { usleep(20_000) }
        #expect(burst.filter(\.isConnected).count == 400)
        relay.process.resume()
        // The relay serves eight at once (each gets 408 only after its 10 s head deadline);
        // every other one is answered at once.
        let answering = Date().addingTimeInterval(2)
        let answers = burst.map { $0.firstBytes(12, until: answering) }
        let refused = answers.filter { $0 == "HTTP/1.1 503" }.count
        #expect(refused >= 400 - 8, "\(Dictionary(grouping: answers, by: { $0 }).mapValues(\.count))")
    }
}

/// A client socket whose connect returns at once, so that hundreds can be made in a burst.
private struct NonBlockingClient {
    let descriptor: Int32

    init(port: UInt16) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// The handshake is done: the socket is writable with no error pending.
    var isConnected: Bool {
        var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        guard poll(&waiting, 1, 0) == 1, waiting.revents & Int16(POLLOUT) != 0 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
    }

    /// The first `count` bytes the server sends before `deadline`, as text ("" for none).
    func firstBytes(_ count: Int, until deadline: Date) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: count)
        // Polled at least once, so that an answer already waiting is read after the deadline too.
        while received.count < count {
            var readable = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&readable, 1, Int32(max(0, deadline.timeIntervalSinceNow * 1000))) == 1 else { break }
            let got = recv(descriptor, &buffer, count - received.count, 0)
            guard got > 0 else { break }
            received += buffer[..<got]
        }
        return String(decoding: received, as: UTF8.self)
    }

    func close() { Glibc.close(descriptor) }
}
