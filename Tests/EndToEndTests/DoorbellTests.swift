import Foundation
import Scratch
import TestClips
import Testing
import Waiting

/// tools/examples/doorbell, run by sentry on a smile, against a local server playing ntfy.
@Suite("The smile doorbell example, end to end")
struct DoorbellTests {
    /// A chat service played by Python on a port of its own: `script` gets the
    /// path to record into as `sys.argv[1]` and writes its port to `PATH.port`.
    final class FakeService {
        let process = Process()
        let port: String

        init(_ script: String, recordingInto path: String) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", script, path]
            // Its output is not the test's: a child holding the test runner's pipe would keep it waiting.
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            var port = ""
            _ = eventually { port = (try? String(contentsOfFile: path + ".port", encoding: .utf8)) ?? ""; return !port.isEmpty }
            self.port = port
        }

        deinit {
            // SIGKILL: a test runner that ignores SIGTERM hands that on to its children.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Runs sentry on the demo clip with the doorbell on its first smile, `environment` saying where to post.
    static func ring(_ environment: [String: String]) throws -> SentryProcess {
        let doorbell = DemoClip.repository.appendingPathComponent("tools/examples/doorbell").path
        return try SentryProcess(
            ["--camera", DemoClip.path, "--serial", "sim", "--quiet", "--on-expression", "smile=\(doorbell)"],
            environment: environment.merging(["SENTRY_DOORBELL_MESSAGE": "Somebody smiled at the \"door\""]) { $1 })
    }

    /// The picture is a JPEG with one face in it.
    static func expectFace(in path: String) throws {
        let faces = try SentryProcess(["faces", "--json", path])
        let reading = try #require(try JSONSerialization.jsonObject(with: Data(faces.standardOutput.utf8)) as? [String: Any])
        #expect((reading["faces"] as? [Any])?.count == 1, "\(faces.standardOutput.prefix(200))")
    }

    @Test("a held smile rings the doorbell: the fake ntfy gets a PUT with the message and a JPEG that holds the face")
    func ringsWithThePhoto() throws {
        let scratch = try ScratchDirectory("doorbell")
        let received = scratch.file("received").path
        // ntfy's part: take each PUT, keep the first one's headers and body, answer 200.
        let ntfy = try FakeService(
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
            """, recordingInto: received)
        let run = try Self.ring(["SENTRY_DOORBELL_NTFY": "http://127.0.0.1:\(ntfy.port)/front-door"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(eventually { FileManager.default.fileExists(atPath: received + ".txt") }, "the doorbell never rang: \(run.standardError)")
        let request = (try? String(contentsOfFile: received + ".txt", encoding: .utf8)) ?? ""
        #expect(
            request.hasPrefix("/front-door\n") && request.contains("Message: Somebody smiled at the \"door\"") && request.contains("Filename: visitor.jpg"),
            "\(request)")
        try Self.expectFace(in: received + ".jpg")
    }

    @Test("with a Slack token the doorbell follows Slack's upload flow: an upload URL, the JPEG sent there, the file shared in the channel with the message")
    func ringsSlack() throws {
        let scratch = try ScratchDirectory("doorbell-slack")
        let received = scratch.file("received").path
        // Slack's part, as its API documents the three calls; a wrong token is refused as Slack does.
        let slack = try FakeService(
            """
            import email, http.server, json, os, sys, urllib.parse
            record = sys.argv[1]
            class API(http.server.BaseHTTPRequestHandler):
                def answer(self, value):
                    body = json.dumps(value).replace("/", "\\\\/").encode()
                    self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(body)
                def do_POST(self):
                    body = self.rfile.read(int(self.headers["Content-Length"]))
                    if self.path.startswith("/upload/"):
                        head = b"Content-Type: " + self.headers["Content-Type"].encode() + b"\\r\\n\\r\\n"
                        part = [p for p in email.message_from_bytes(head + body).get_payload() if p.get_param("name", header="content-disposition") == "file"][0]
                        open(record + ".jpg", "wb").write(part.get_payload(decode=True))
                        self.send_response(200); self.end_headers(); self.wfile.write(b"OK - 1"); return
                    if self.headers.get("Authorization") != "Bearer xoxb-test":
                        return self.answer({"ok": False, "error": "invalid_auth"})
                    if self.path == "/api/files.getUploadURLExternal":
                        form = urllib.parse.parse_qs(body.decode())
                        open(record + ".ask", "w").write(json.dumps(form))
                        port = self.server.server_address[1]
                        return self.answer({"ok": True, "upload_url": "http://127.0.0.1:%d/upload/F123" % port, "file_id": "F123"})
                    if self.path == "/api/files.completeUploadExternal":
                        open(record + ".part", "w").write(body.decode())
                        os.rename(record + ".part", record + ".txt")
                        return self.answer({"ok": True, "files": [{"id": "F123"}]})
                    self.answer({"ok": False, "error": "unknown_method"})
                def log_message(self, *args): pass
            server = http.server.HTTPServer(("127.0.0.1", 0), API)
            open(record + ".port", "w").write(str(server.server_address[1]))
            server.serve_forever()
            """, recordingInto: received)
        let run = try Self.ring([
            "SENTRY_DOORBELL_SLACK_API": "http://127.0.0.1:\(slack.port)/api", "SENTRY_DOORBELL_SLACK_TOKEN": "xoxb-test",
            "SENTRY_DOORBELL_SLACK_CHANNEL": "C0FRONT",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(eventually { FileManager.default.fileExists(atPath: received + ".txt") }, "the doorbell never rang: \(run.standardError)")
        let asked = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: received + ".ask"))) as? [String: [String]]
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: received + ".jpg"))
        #expect(asked?["filename"] == ["visitor.jpg"] && asked?["length"] == ["\(jpeg.count)"], "\(asked ?? [:])")
        let completed = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: received + ".txt"))) as? [String: Any]
        #expect(completed?["channel_id"] as? String == "C0FRONT" && completed?["initial_comment"] as? String == "Somebody smiled at the \"door\"", "\(completed ?? [:])")
        #expect((completed?["files"] as? [[String: String]])?.first?["id"] == "F123")
        try Self.expectFace(in: received + ".jpg")
        // A hook run without anywhere to post says so in one line.
        let bare = try SentryProcess(program: DemoClip.repository.appendingPathComponent("tools/examples/doorbell").path, [], environment: ["SENTRY_FACE": received + ".jpg"])
        #expect(bare.status == 64 && bare.standardError.contains("set SENTRY_DOORBELL_NTFY"), "\(bare.standardError)")
    }
}
