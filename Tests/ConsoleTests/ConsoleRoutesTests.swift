import Console
import FaceDetection
import Foundation
import Geometry
import Imaging
import JPEG
import MonotonicTime
import RunControl
import Synchronization
import Testing
import Tracking
import Video
import Waiting
import WebServing

/// Stands in for the running sentry: records what the console asked for.
final class RecordingController: ControlSession {
    let requests = Mutex<[SteeringRequest]>([])
    let changes = Mutex<[[String: SettingValue]]>([])
    var settings: [String: SettingValue] { ["offset": .integer(40), "tilt": .bool(false)] }
    var fields: [SettingField] {
        var offset = SettingField(key: "offset", group: "Aim", label: "Clear of each end", unit: "°", help: "Degrees kept clear.")
        (offset.kind, offset.minimum, offset.maximum) = ("integer", 0, 89)
        var tilt = SettingField(key: "tilt", group: "Aim", label: "Tilt servo", unit: "", help: "Also drive a tilt servo.")
        tilt.kind = "switch"
        return [offset, tilt]
    }

    func change(_ changes: [String: SettingValue]) -> Result<[String: SettingValue], ControlRefusal> {
        if changes["offset"] == .integer(99) { return .failure(ControlRefusal("--offset 99 must be between 0 and 89")) }
        self.changes.withLock { $0.append(changes) }
        return .success(settings.merging(changes) { $1 })
    }

    func save() -> Result<String, ControlRefusal> { .success("saved to /tmp/x.toml") }

    func steer(_ request: SteeringRequest) { requests.withLock { $0.append(request) } }
}

/// A request as a client sends it: a body comes with its length and, unless `headers`
/// say otherwise, as JSON (as the console's page and scripts send it).
func request(_ method: String, _ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:], body: String = "") -> HTTPRequest {
    var headers = headers
    if !body.isEmpty {
        headers["Content-Length"] = "\(body.utf8.count)"
        if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
    }
    return HTTPRequest(method: method, path: path, query: query, headers: headers, body: Array(body.utf8))
}

func bodyText(_ response: HTTPResponse) -> String {
    String(decoding: response.bodyBytes, as: UTF8.self)
}

func sampleStatus(
    frame: Int = 7, faces: [FaceBox] = [FaceBox(Box(x: 100, y: 80, width: 60, height: 60), score: 0.9)],
    target: Int? = 0
) -> FrameStatus {
    FrameStatus(
        frame: frame, time: Double(frame) / 10, width: 640, height: 480, faces: faces, target: target,
        aim: Angles(Aim(pan: 70, tilt: 60)), commanded: Angles(Aim(pan: 70, tilt: 90)), commands: ["X70."],
        mode: "Shooting — X: 70", steering: "auto", locked: false, fps: 10, detectMs: 5, loopMs: 6, serial: "ok", detector: "blazeface")
}

func sampleFrame(index: Int = 7, chroma: Bool = false) -> Frame {
    var image = GrayImage(width: 64, height: 48)
    for y in 0..<48 { for x in 0..<64 { image[x, y] = UInt8((x * 4 + y) & 0xFF) } }
    return Frame(
        image: image, timestamp: Double(index) / 10, index: index,
        chroma: chroma ? ChromaPlanes(layout: .halfWidth, lumaWidth: 64, lumaHeight: 48) : nil)
}

@Suite("the console's routes, in process")
struct ConsoleRoutesTests {
    let hub: ConsoleHub
    let controller = RecordingController()

    init() throws { hub = try ConsoleHub(framesPerSecond: 30) }

    func routes(token: String? = nil) -> ConsoleRoutes { ConsoleRoutes(hub: hub, controller: controller, token: AccessToken(token)) }

    @Test("GET / is the page, its script and stylesheet are files of their own; unknown paths 404; wrong methods 405")
    func page() async throws {
        let page = routes().respond(to: request("GET", "/"))
        #expect(page.status == .ok)
        #expect(page.headers["Content-Type"]?.hasPrefix("text/html") == true)
        #expect(page.headers["Content-Security-Policy"]?.contains("script-src 'self'") == true)
        #expect(page.headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true)
        #expect(bodyText(page).contains("<script src=\"/console.js\"></script>") && !bodyText(page).contains("<script>"))
        let script = routes().respond(to: request("GET", "/console.js"))
        #expect(script.headers["Content-Type"]?.hasPrefix("text/javascript") == true && bodyText(script).contains("/stream.mjpg"))
        #expect(routes().respond(to: request("GET", "/console.css")).headers["Content-Type"]?.hasPrefix("text/css") == true)
        #expect(routes().respond(to: request("GET", "/etc/passwd")).status == .notFound)
        #expect(routes().respond(to: request("DELETE", "/api/status")).status == .methodNotAllowed)
        #expect(routes().respond(to: request("GET", "/api/aim")).status == .methodNotAllowed)
        hub.close()
    }

    @Test("/api/status: 503 before the first frame, then every field of the newest frame and the settings")
    func status() async throws {
        #expect(routes().respond(to: request("GET", "/api/status")).status == .serviceUnavailable)
        hub.publish(sampleStatus(frame: 6), frame: sampleFrame(index: 6), capturedAt: monotonicSeconds())
        hub.publish(sampleStatus(frame: 7), frame: sampleFrame(index: 7), capturedAt: monotonicSeconds())
        let response = routes().respond(to: request("GET", "/api/status"))
        #expect(response.status == .ok)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.bodyBytes)) as? [String: Any])
        #expect(json["frame"] as? Int == 7)
        #expect(json["time"] as? Double == 0.7)
        let faces = try #require(json["faces"] as? [[String: Any]])
        #expect(faces.first?["x"] as? Int == 100 && faces.first?["w"] as? Int == 60)
        #expect((faces.first?["score"] as? Double).map { abs($0 - 0.9) < 1e-6 } == true)
        #expect(json["target"] as? Int == 0)
        #expect((json["aim"] as? [String: Int]) == ["pan": 70, "tilt": 60])
        for key in ["mode", "fps", "detectMs", "serial", "detector", "steering", "commanded", "settings", "stream"] {
            #expect(json[key] != nil, "missing \(key)")
        }
        #expect((json["settings"] as? [String: Any])?["offset"] as? Int == 40)
        #expect((json["settings"] as? [String: Any])?["tilt"] as? Bool == false)
        hub.close()
    }

    @Test("with a token, every route refuses a request without it (401) and takes it by query, Bearer or cookie")
    func token() async throws {
        let routes = routes(token: "s3cret")
        for path in ["/", "/api/status", "/stream.mjpg", "/api/events"] {
            let refused = routes.respond(to: request("GET", path))
            #expect(refused.status == .unauthorized, "\(path)")
            #expect(bodyText(refused).contains("token"))
        }
        #expect(routes.respond(to: request("POST", "/api/aim", body: #"{"action":"scan"}"#)).status == .unauthorized)
        #expect(routes.respond(to: request("GET", "/", query: [.init(name: "token", value: "wrong")])).status == .unauthorized)
        #expect(routes.respond(to: request("GET", "/api/status", query: [.init(name: "token", value: "s3cret")])).status != .unauthorized)
        #expect(routes.respond(to: request("GET", "/", headers: ["Authorization": "Bearer s3cret"])).status == .ok)
        #expect(controller.requests.withLock { $0 }.isEmpty)
        hub.close()
    }

    @Test("the page opened with ?token= moves the token into a strict, script-proof cookie and out of the URL; the cookie admits the page's requests")
    func tokenCookie() async throws {
        let routes = routes(token: "s3 cret;=")
        let first = routes.respond(to: request("GET", "/", query: [.init(name: "token", value: "s3 cret;=")]))
        #expect(first.status == .seeOther && first.headers["Location"] == "/")
        let cookie = try #require(first.headers["Set-Cookie"])
        #expect(cookie.hasPrefix("sentry_token=s3%20cret%3B%3D;") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
        let sent = String(cookie.prefix { $0 != ";" })
        for path in ["/", "/api/status", "/stream.mjpg", "/api/events"] {
            let response = routes.respond(to: request("GET", path, headers: ["Cookie": "theme=dark; " + sent]))
            #expect(response.status != .unauthorized, "\(path)")
        }
        let page = routes.respond(to: request("GET", "/", headers: ["Cookie": sent]))
        #expect(page.status == .ok && page.headers["Referrer-Policy"] == "no-referrer")
        #expect(routes.respond(to: request("GET", "/api/status", headers: ["Cookie": "sentry_token=wrong"])).status == .unauthorized)
        #expect(
            routes.respond(to: request("GET", "/api/status", headers: ["Cookie": "other_token=s3%20cret%3B%3D"])).status
                == .unauthorized)
        hub.close()
    }

    @Test("settings: changes reach the controller; its refusals, unknown keys, bad JSON and empty bodies are 400s")
    func settings() async throws {
        let ok = routes().respond(to: request("POST", "/api/settings", body: #"{"offset": 30, "tilt": true}"#))
        #expect(ok.status == .ok)
        #expect(controller.changes.withLock { $0 } == [["offset": .integer(30), "tilt": .bool(true)]])
        let cases: [(String, String)] = [
            (#"{"offset": 99}"#, "--offset 99 must be between 0 and 89"),
            (#"{"serial": "/dev/ttyS0"}"#, "'serial' cannot be changed while running"),
            (#"{"offset": 30"#, "not valid JSON"),
            (#"[1, 2]"#, "wrong type"),
            (#"{}"#, "no settings given"),
            ("", "not valid JSON"),
            (#"{"offset": [1]}"#, "not the JSON expected"),
        ]
        for (body, message) in cases {
            let response = routes().respond(to: request("POST", "/api/settings", body: body))
            let text = bodyText(response)
            #expect(response.status == .badRequest, "\(body)")
            #expect(text.contains(message), "\(body): \(text)")
        }
        #expect(controller.changes.withLock { $0 }.count == 1)
        hub.close()
    }

    @Test("GET /api/settings: each field as the page builds it, in order, with the values now")
    func settingFields() async throws {
        let response = routes().respond(to: request("GET", "/api/settings"))
        #expect(response.status == .ok)
        struct Reply: Decodable {
            var fields: [SettingField]
            var settings: [String: SettingValue]
        }
        let reply = try JSONDecoder().decode(Reply.self, from: Data(bodyText(response).utf8))
        #expect(reply.fields == controller.fields)
        #expect(reply.settings == controller.settings)
        hub.close()
    }

    @Test("bodies over 16 KiB are refused with 413 before anything is done")
    func oversized() async throws {
        let big = "{\"offset\": \"" + String(repeating: "9", count: 20_000) + "\"}"
        for path in ["/api/settings", "/api/aim"] {
            let response = routes().respond(to: request("POST", path, body: big))
            #expect(response.status == .payloadTooLarge, "\(path)")
        }
        #expect(controller.changes.withLock { $0 }.isEmpty && controller.requests.withLock { $0 }.isEmpty)
        hub.close()
    }

    @Test("aim: point inside the frame, nudge, scan, centre, auto reach the controller; anything else is a 400")
    func aim() async throws {
        #expect(routes().respond(to: request("POST", "/api/aim", body: #"{"action":"point","x":1,"y":1}"#)).status == .serviceUnavailable)
        hub.publish(sampleStatus(), frame: sampleFrame(), capturedAt: monotonicSeconds())
        for body in [
            #"{"action":"point","x":320.5,"y":100}"#, #"{"action":"nudge","pan":-2}"#, #"{"action":"scan"}"#,
            #"{"action":"center"}"#, #"{"action":"auto"}"#,
        ] {
            #expect(routes().respond(to: request("POST", "/api/aim", body: body)).status == .accepted, "\(body)")
        }
        #expect(controller.requests.withLock { $0 } == [.point(x: 320.5, y: 100), .nudge(pan: -2, tilt: 0), .scan, .center, .auto])
        for body in [
            #"{"action":"point","x":641,"y":100}"#, #"{"action":"point","x":-1,"y":0}"#, #"{"action":"point","x":5}"#,
            #"{"action":"nudge","pan":500}"#, #"{"action":"fire"}"#, #"{"x":1}"#, #"{"action":"point","x":"left","y":1}"#,
        ] {
            let response = routes().respond(to: request("POST", "/api/aim", body: body))
            #expect(response.status == .badRequest, "\(body)")
        }
        #expect(controller.requests.withLock { $0 }.count == 5)
        hub.close()
    }

    @Test("nothing is encoded while no one watches; a viewer gets JPEG parts of the frame's size with its index")
    func stream() async throws {
        for index in 0..<5 { hub.publish(sampleStatus(frame: index), frame: sampleFrame(index: index), capturedAt: monotonicSeconds()) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(hub.figures.framesEncoded == 0)
        let response = routes().respond(to: request("GET", "/stream.mjpg"))
        #expect(response.headers["Content-Type"] == "multipart/x-mixed-replace; boundary=sentryframe")
        guard case .stream(let makeStream) = response.body else {
            Issue.record("no stream")
            return
        }
        let hub = hub
        var body = makeStream()
        // A thread of its own, as the frame loop is: the stream blocks this test's thread while it waits.
        // Frames a thirtieth of a second apart on their own clock, each once the one before is encoded.
        let stopped = Atomic(false)
        let publisher = Thread {
            let start = monotonicSeconds()
            for index in 5..<200 where !stopped.load(ordering: .relaxed) {
                let encoded = hub.figures.framesEncoded
                hub.publish(sampleStatus(frame: index), frame: sampleFrame(index: index, chroma: index.isMultiple(of: 2)), capturedAt: start + Double(index) / 30)
                _ = eventually(within: 2, lookingEvery: 0.001) { hub.figures.framesEncoded > encoded || stopped.load(ordering: .relaxed) }
            }
        }
        publisher.start()
        var received: [UInt8] = []
        var parts: [(index: Int, jpeg: [UInt8])] = []
        while let chunk = body.next() {
            received += chunk
            parts = MJPEGParts.split(received)
            if parts.count >= 3 { break }
        }
        stopped.store(true, ordering: .relaxed)
        #expect(parts.count >= 3)
        // In order; a frame may come twice when nothing new came for the keep-alive's 2 s (a loaded machine).
        #expect(parts.map(\.index) == parts.map(\.index).sorted() && Set(parts.map(\.index)).count >= 2)
        for part in parts {
            let info = try #require(JPEGHeader.read(part.jpeg))
            #expect(info.width == 64 && info.height == 48)
            #expect(part.index >= 5)
        }
        #expect(hub.figures.framesEncoded >= Set(parts.map(\.index)).count)
        hub.close()
    }
}

/// Splits a multipart/x-mixed-replace body into its whole parts.
enum MJPEGParts {
    static func split(_ bytes: [UInt8]) -> [(index: Int, jpeg: [UInt8])] {
        var parts: [(Int, [UInt8])] = []
        var position = 0
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while let end = find(separator, in: bytes, from: position) {
            let header = String(decoding: bytes[position..<end], as: UTF8.self)
            guard let length = value("Content-Length", in: header), let index = value("X-Frame-Index", in: header),
                end + 4 + length <= bytes.count
            else { break }
            parts.append((index, Array(bytes[(end + 4)..<(end + 4 + length)])))
            position = end + 4 + length + 2
        }
        return parts
    }

    static func value(_ name: String, in header: String) -> Int? {
        header.split(separator: "\r\n").first { $0.hasPrefix(name + ":") }
            .flatMap { Int($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)) }
    }

    static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
        for i in start...(bytes.count - pattern.count) where bytes[i] == pattern[0] && Array(bytes[i..<(i + pattern.count)]) == pattern { return i }
        return nil
    }
}
