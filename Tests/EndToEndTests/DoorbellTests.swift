import Foundation
import Scratch
import TestClips
import Testing
import Waiting

/// tools/examples/doorbell, run by sentry on a smile, against a local server playing ntfy.
@Suite("The smile doorbell example, end to end")
struct DoorbellTests {
    @Test("a held smile rings the doorbell: the fake ntfy gets a PUT with the message and a JPEG that holds the face")
    func ringsWithThePhoto() throws {
        let scratch = try ScratchDirectory("doorbell")
        let received = scratch.file("received").path
        // ntfy's part: take each PUT, keep the first one's headers and body, answer 200.
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [
            "python3", "-c",
            """
            import http.server, os, sys
            class Topic(http.server.BaseHTTPRequestHandler):
                def do_PUT(self):
                    body = self.rfile.read(int(self.headers["Content-Length"]))
                    if not os.path.exists(sys.argv[1] + ".txt"):
                        open(sys.argv[1] + ".jpg", "wb").write(body)
                        open(sys.argv[1] + ".part", "w").write(self.path + "\\n" + str(self.headers))
                        os.rename(sys.argv[1] + ".part", sys.argv[1] + ".txt")
                    self.send_response(200); self.end_headers(); self.wfile.write(b"{}")
                def log_message(self, *args): pass
            server = http.server.HTTPServer(("127.0.0.1", 0), Topic)
            open(sys.argv[1] + ".port", "w").write(str(server.server_address[1]))
            server.serve_forever()
            """, received,
        ]
        // Its output is not the test's: a child holding the test runner's pipe would keep it waiting.
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            // SIGKILL: a test runner that ignores SIGTERM hands that on to its children.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        var port = ""
        #expect(eventually { port = (try? String(contentsOfFile: received + ".port", encoding: .utf8)) ?? ""; return !port.isEmpty })
        let doorbell = DemoClip.repository.appendingPathComponent("tools/examples/doorbell").path
        let run = try SentryProcess(
            ["--camera", DemoClip.path, "--serial", "sim", "--quiet", "--on-expression", "smile=\(doorbell)"],
            environment: ["SENTRY_DOORBELL_NTFY": "http://127.0.0.1:\(port)/front-door", "SENTRY_DOORBELL_MESSAGE": "Somebody smiled at the door"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(eventually { FileManager.default.fileExists(atPath: received + ".txt") }, "the doorbell never rang: \(run.standardError)")
        let request = (try? String(contentsOfFile: received + ".txt", encoding: .utf8)) ?? ""
        #expect(request.hasPrefix("/front-door\n") && request.contains("Message: Somebody smiled at the door") && request.contains("Filename: visitor.jpg"), "\(request)")
        // The picture is a JPEG with one face filling much of it.
        let faces = try SentryProcess(["faces", "--json", received + ".jpg"])
        let reading = try #require(try JSONSerialization.jsonObject(with: Data(faces.standardOutput.utf8)) as? [String: Any])
        #expect((reading["faces"] as? [Any])?.count == 1, "\(faces.standardOutput.prefix(200))")
    }
}
