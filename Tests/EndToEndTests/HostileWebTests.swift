import Foundation
import HTTPTestClient
import Scratch
import Testing
import Waiting

#if canImport(Glibc)
    import Glibc
#endif

/// Another site on this machine: its pages, served by Python's server on a port the
/// system chose, as a page in another tab of the user's browser would be.
final class ForeignSite {
    let directory: ScratchDirectory
    private let server = Process()
    private(set) var port: UInt16 = 0

    init(pages: [String: String]) throws {
        directory = try ScratchDirectory("site")
        for (name, page) in pages { _ = try directory.write(page, to: name) }
        // "Serving HTTP on 127.0.0.1 port N …" says the port.
        let log = directory.file("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", directory.path]
        server.standardOutput = try FileHandle(forWritingTo: log)
        server.standardError = FileHandle.nullDevice
        try server.run()
        _ = eventually(within: 15) { [self] in
            port = listeningPort(in: (try? String(contentsOf: log, encoding: .utf8)) ?? "", after: "Serving HTTP on 127.0.0.1 port ") ?? 0
            return port != 0
        }
    }

    /// Opens `name` in `browser`, trying until the server answers with the page titled `title`.
    func open(_ name: String, titled title: String, in browser: Browser) -> Bool {
        eventually(within: 5) {
            (try? browser.run(["open": "http://127.0.0.1:\(port)/\(name)", "width": 800, "height": 600])) != nil
                && (try? browser.eval("document.title")) as? String == title
        }
    }

    // SIGKILL: the test runner's threads may hold SIGTERM blocked, and Process passes that mask on.
    deinit {
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
    }
}

@Suite("the console against a hostile client and a hostile page, through the real binary", .serialized)
struct HostileWebTests {
    @Test("the probes that once got in: a smuggled body changes nothing, and nothing a client sends forges a line of sentry's log")
    func probes() throws {
        let console = try RunningConsole(["--web-token", "s3cret"])
        let auth = "Authorization: Bearer s3cret\r\n"
        func send(_ request: String) throws -> String {
            let client = try RawClient(port: console.port)
            defer { client.close() }
            client.send(request)
            return String(decoding: client.readAll(), as: UTF8.self)
        }
        func deadband() throws -> Double? {
            let reply = try HTTP.request(port: console.port, "GET", "/api/status", headers: ["Authorization: Bearer s3cret"])
            let json = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any]
            return (json?["settings"] as? [String: Any])?["deadband"] as? Double
        }
        let before = try deadband()
        let smuggled = try send(
            "POST /api/settings HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)Content-Type: text/plain\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n{\"deadband\": 5}")
        #expect(!smuggled.hasPrefix("HTTP/1.1 200"), "\(smuggled)")
        #expect(try deadband() == before && before != 5)

        let forged = [
            "GET /x%0AINJECTED%20line HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "GET /x%E2%80%A8INJECTED HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "GET /%C2%85INJECTED HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "GET / HTTP/1.1\r\nHost: \u{1B}[2J\u{1B}[HINJECTED\r\n\r\n",
            "GET /x\u{1B}]0;INJECTED\u{07} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: a\rINJECTED: b\r\n\r\n",
        ]
        for probe in forged { #expect(try send(probe).hasPrefix("HTTP/1.1 400"), "\(probe.debugDescription)") }
        // Taken, then refused for its token and logged: quoted escaped.
        #expect(try send("GET /x%E2%80%AEgpj.exe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").hasPrefix("HTTP/1.1 401"))
        #expect(try send("GET /api/status HTTP/1.1\r\nHost: evil.example\r\n\(auth)\r\n").hasPrefix("HTTP/1.1 403"))
        #expect(console.stop() == 0)
        let log = console.log
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("INJECTED") }, "\(log)")
        #expect(!log.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x85 || $0.value == 0x2028 || $0.value == 0x07 || $0 == "\r" })
        #expect(log.contains("GET /x\\xe2\\x80\\xaegpj.exe: no token"), "\(log)")
        #expect(log.contains("host evil.example is not a name"))
    }

    @Test("the event feed over HTTP/1.0 is not chunked; HEAD of the page has its length and no body")
    func conformance() throws {
        let console = try RunningConsole()
        let feed = try RawClient(port: console.port)
        defer { feed.close() }
        feed.send("GET /api/events HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        var reply: [UInt8] = []
        // Chunked, the body would start with the first piece's length in hex: "d\r\nretry: 1000".
        while HTTP.find(Array("\r\n\r\nretry: 1000\n\n".utf8), in: reply, from: 0) == nil, reply.count < 4096 {
            let more = feed.read(1)
            guard !more.isEmpty else { break }
            reply += more
        }
        let head = String(decoding: reply, as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 200") && !head.contains("Transfer-Encoding"), "\(head)")
        let page = try HTTP.request(port: console.port, "GET", "/")
        let client = try RawClient(port: console.port)
        defer { client.close() }
        client.send("HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let headReply = String(decoding: client.readAll(), as: UTF8.self)
        #expect(headReply.hasPrefix("HTTP/1.1 200") && headReply.contains("Content-Length: \(page.body.count)\r\n") && headReply.hasSuffix("\r\n\r\n"))
        #expect(console.stop() == 0)
    }

    @Test("another site's page cannot frame the console (Chromium shows its error page instead), while it can frame a page of its own")
    func framing() throws {
        let console = try RunningConsole()
        let site = try ForeignSite(pages: [
            "frame.html": """
                <!doctype html><title>framer</title>
                <iframe src="http://127.0.0.1:\(console.port)/"></iframe><iframe src="own.html"></iframe>
                <script>window.loaded = 0; for (const frame of document.querySelectorAll("iframe")) frame.onload = () => window.loaded++;</script>
                """,
            "own.html": "<!doctype html><title>own</title>",
        ])
        let browser = try Browser()
        #expect(site.open("frame.html", titled: "framer", in: browser))
        try browser.run(["wait": "window.loaded >= 2", "timeout": 15])
        let frames = try browser.run(["frames": true]) as? [[String: Any]] ?? []
        let consoleFrame = frames.first { ($0["error"] as? String)?.contains(":\(console.port)/") == true || ($0["url"] as? String)?.contains(":\(console.port)/") == true }
        #expect(consoleFrame?["url"] as? String == "chrome-error://chromewebdata/", "\(frames)")
        #expect(frames.contains { ($0["url"] as? String)?.hasSuffix("/own.html") == true && $0["error"] is NSNull }, "\(frames)")
        #expect(console.stop() == 0)
    }

    @Test("the console's own page runs under its policy: its script draws frames, its stylesheet colours the legend")
    func pageUnderPolicy() throws {
        let console = try RunningConsole()
        let browser = try Browser()
        try browser.run(["open": console.base + "/", "width": 1280, "height": 900])
        try browser.run(["wait": "window.sentry && window.sentry.framesShown > 3", "timeout": 15])
        #expect(try browser.eval("getComputedStyle(document.querySelector('.legend .pan')).color") as? String == "rgb(77, 163, 255)")
        #expect(console.stop() == 0)
    }
}
