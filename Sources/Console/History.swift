import Events
import FoundationEssentials
import WebServing

/// The events `--events` keeps, as the console shows them: a page of
/// records (`GET /api/history?limit=&before=`) and their pictures
/// (`GET /history/ID.jpg`, `/history/ID-face.jpg`). Only names of the
/// events' own shape are looked up, so no request reaches a file outside
/// the events folder.
struct HistoryAPI: Sendable {
    /// `nil`: the run keeps no events.
    let store: EventStore?

    /// Events a page shows when the request does not say.
    static let defaultLimit = 20
    /// The most one request gets.
    static let maximumLimit = 200

    func page(_ request: HTTPRequest) -> HTTPResponse {
        guard let store else { return Self.notKept }
        var limit = Self.defaultLimit
        var before: String?
        for item in request.query {
            switch item.name {
            case "limit":
                guard let value = Int(item.value), (1...Self.maximumLimit).contains(value), item.value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                    return ConsoleAPI.json(.badRequest, ["error": "limit '\(item.value)' is not a number from 1 to \(Self.maximumLimit); e.g. /api/history?limit=20"])
                }
                limit = value
            case "before":
                guard EventRecord.isValidID(item.value) else {
                    return ConsoleAPI.json(.badRequest, ["error": "before is not an event id; pass the id of the last event of the page before"])
                }
                before = item.value
            default: continue
            }
        }
        struct Page: Encodable {
            var events: [EventRecord]
            var more: Bool
        }
        let (records, more) = store.history(limit: limit, before: before)
        return ConsoleAPI.json(.ok, Page(events: records, more: more))
    }

    /// `/history/ID.jpg` (the frame) or `/history/ID-face.jpg` (the crop).
    func picture(_ request: HTTPRequest) -> HTTPResponse {
        guard let store else { return Self.notKept }
        let name = request.path.dropFirst("/history/".count)
        let notFound = HTTPResponse.text(.notFound, "no such event picture; the history lists the ones kept")
        guard name.hasSuffix(".jpg") else { return notFound }
        var id = String(name.dropLast(4))
        let face = id.hasSuffix("-face")
        if face { id = String(id.dropLast(5)) }
        guard EventRecord.isValidID(id) else { return notFound }
        let paths = store.paths(of: id)
        guard let bytes = FileManager.default.contents(atPath: face ? paths.face : paths.frame) else { return notFound }
        // An event's pictures never change: the browser may keep them. They are faces:
        // no other site's page may show them (`<img src>` is no cross-site request the site rules see).
        return HTTPResponse(
            status: .ok, headers: ["Content-Type": "image/jpeg", "Cache-Control": "private, max-age=86400", "Cross-Origin-Resource-Policy": "same-origin"],
            body: .bytes(Array(bytes)))
    }

    static let notKept = ConsoleAPI.json(.notFound, ["error": "this run keeps no events; start sentry with --events DIR to keep them"])
}
