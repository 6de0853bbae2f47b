import Console
import Events
import Foundation
import Geometry
import Scratch
import Testing
import WebServing

@Suite("the console's history of kept events, in process")
struct HistoryRoutesTests {
    let hub: ConsoleHub
    let scratch: ScratchDirectory
    let store: EventStore
    let ids: [String]

    init() throws {
        hub = try ConsoleHub(framesPerSecond: 30)
        scratch = try ScratchDirectory("history")
        store = try EventStore(directory: scratch.file("events").path, keep: 100, maximumBytes: 1 << 30)
        var ids: [String] = []
        for index in 0..<5 {
            let record = EventRecord(
                kind: index == 2 ? .expression : .lock, unixTime: 1_795_871_568 + Double(index), frameTime: Double(index), frame: index,
                box: Box(x: 10, y: 10, width: 50, height: 50), pan: 90, tilt: 90)
            try store.save(record, frame: [0xFF, 0xD8, UInt8(index), 0xFF, 0xD9], face: [0xFF, 0xD8, 0xFA, UInt8(index), 0xFF, 0xD9])
            ids.append(record.id)
        }
        self.ids = ids
    }

    func routes(token: String? = nil, history: Bool = true) -> ConsoleRoutes {
        ConsoleRoutes(hub: hub, controller: RecordingController(), history: history ? store : nil, token: AccessToken(token))
    }

    func page(_ response: HTTPResponse) throws -> (ids: [String], more: Bool) {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.bodyBytes)) as? [String: Any])
        let events = try #require(object["events"] as? [[String: Any]])
        return (events.compactMap { $0["id"] as? String }, object["more"] as? Bool ?? false)
    }

    @Test("GET /api/history pages newest first with limit and before")
    func paging() throws {
        let routes = routes()
        let first = routes.respond(to: request("GET", "/api/history", query: [.init(name: "limit", value: "2")]))
        #expect(first.status == .ok)
        #expect(try page(first) == ([ids[4], ids[3]], true))
        let second = routes.respond(to: request("GET", "/api/history", query: [.init(name: "limit", value: "2"), .init(name: "before", value: ids[3])]))
        #expect(try page(second) == ([ids[2], ids[1]], true))
        let rest = routes.respond(to: request("GET", "/api/history", query: [.init(name: "before", value: ids[1])]))
        #expect(try page(rest) == ([ids[0]], false))
        for limit in ["0", "201", "-1", "+5", "ten", ""] {
            let refused = routes.respond(to: request("GET", "/api/history", query: [.init(name: "limit", value: limit)]))
            #expect(refused.status == .badRequest && bodyText(refused).contains("limit"), "\(limit): \(bodyText(refused))")
        }
        let badBefore = routes.respond(to: request("GET", "/api/history", query: [.init(name: "before", value: "../../etc/passwd")]))
        #expect(badBefore.status == .badRequest)
    }

    @Test("an event's frame and face are served as JPEG; a bad id, a missing one or a path out of the folder is 404")
    func pictures() {
        let routes = routes()
        let frame = routes.respond(to: request("GET", "/history/\(ids[2]).jpg"))
        #expect(frame.status == .ok && frame.headers["Content-Type"] == "image/jpeg" && frame.bodyBytes == [0xFF, 0xD8, 2, 0xFF, 0xD9])
        let face = routes.respond(to: request("GET", "/history/\(ids[2])-face.jpg"))
        #expect(face.status == .ok && face.bodyBytes == [0xFF, 0xD8, 0xFA, 2, 0xFF, 0xD9])
        for path in [
            "/history/../../etc/passwd", "/history/../../etc/passwd.jpg", "/history/\(ids[2]).json", "/history/\(ids[2])",
            "/history/2026-11-28/000000.000-lock-99.jpg", "/history/\(ids[2].replacingOccurrences(of: "/", with: "/../"))-face.jpg",
            "/history/%2e%2e/x.jpg",
        ] {
            let refused = routes.respond(to: request("GET", path))
            #expect(refused.status == .notFound, "\(path): \(refused.status)")
        }
        #expect(routes.respond(to: request("POST", "/history/\(ids[2]).jpg")).status == .methodNotAllowed)
    }

    @Test("the history is behind the token like every route; a run without --events says how to keep them")
    func tokenAndNotKept() {
        let guarded = routes(token: "s3cret")
        #expect(guarded.respond(to: request("GET", "/api/history")).status == .unauthorized)
        #expect(guarded.respond(to: request("GET", "/history/\(ids[0]).jpg")).status == .unauthorized)
        let allowed = guarded.respond(to: request("GET", "/history/\(ids[0]).jpg", headers: ["Authorization": "Bearer s3cret"]))
        #expect(allowed.status == .ok)
        // The site rules hold here too: a name the console does not answer to gets nothing, and no other site's page may show a face.
        let open = routes()
        #expect(open.respond(to: request("GET", "/history/\(ids[0]).jpg", headers: ["Host": "evil.example"])).status == .forbidden)
        #expect(open.respond(to: request("GET", "/api/history", headers: ["Host": "evil.example:8080"])).status == .forbidden)
        #expect(open.respond(to: request("GET", "/history/\(ids[0])-face.jpg")).headers["Cross-Origin-Resource-Policy"] == "same-origin")
        let none = routes(history: false).respond(to: request("GET", "/api/history"))
        #expect(none.status == .notFound && bodyText(none).contains("--events DIR"))
    }

    @Test("an event kept while the feed is open arrives as an SSE event message; earlier ones are the history's")
    func liveEvent() throws {
        hub.kept(try #require(store.records().first))
        var stream = try #require(Self.eventStream(routes()))
        _ = stream.next()  // retry:
        let newest = try #require(store.records().last)
        hub.kept(newest)
        hub.publish(sampleStatus(frame: 9), frame: sampleFrame(index: 9), capturedAt: 0)
        let text = String(decoding: stream.next() ?? [], as: UTF8.self)
        #expect(text.contains("event: event\ndata: ") && text.contains(newest.id) && !text.contains(ids[0]), "\(text)")
    }

    static func eventStream(_ routes: ConsoleRoutes) -> (any ResponseStream)? {
        guard case .stream(let make) = routes.respond(to: request("GET", "/api/events")).body else { return nil }
        return make()
    }
}
