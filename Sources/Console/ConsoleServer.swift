import Events
import FoundationEssentials
import Logging
import RunControl
import Tracking
import WebServing

/// `sentry --web`: an HTTP server for the console page, the video stream, the
/// status feed and the control API. Off the frame loop: the server only reads
/// the hub and hands requests to the controller.
public final class ConsoleServer: Sendable {
    public let address: ListenAddress
    private let server: HTTPServer

    /// Viewers at once by default (`--web-max-clients`): a page holds two (the video and the feed).
    public static let defaultMaximumClients = 8

    public init(
        address: ListenAddress, token: String?, rules: SiteRules = SiteRules(), maximumClients: Int = ConsoleServer.defaultMaximumClients,
        hub: ConsoleHub, controller: any ControlSession, history: EventStore? = nil, log: RefusalLog? = nil
    ) {
        self.address = address
        let routes = ConsoleRoutes(
            hub: hub, controller: controller, history: history, token: AccessToken(token, cookieName: "sentry_token_\(address.port)"), rules: rules,
            log: log)
        var limits = ServerLimits(maximumClients: maximumClients, clientsFlag: "--web-max-clients")
        limits.maximumBodyBytes = ConsoleAPI.maximumBody
        server = HTTPServer(address: address, limits: limits, name: "sentry-web", logger: log?.logger, handler: routes)
    }

    /// Connections, refusals and the most clients at once so far.
    public var figures: HTTPServer.Figures { server.figures }

    /// Where it listens once started: the port the system chose for port 0.
    public var listening: ListenAddress {
        var bound = address
        bound.port = server.port
        return bound
    }

    /// Listens in the background; throws when the port cannot be had.
    public func start() throws(ServerError) {
        do {
            try server.start()
        } catch {
            throw ServerError("--web \(address): cannot listen (\(error.description)); is something else using the port? pick another, e.g. --web 8081")
        }
    }

    /// Ends every stream and connection.
    public func stop() { server.stop() }
}

/// The console's routes, testable without a socket: every request passes the
/// site rules (host, origin, JSON bodies), then the token gate, then the first
/// route that matches its method and path answers; a known path with another
/// method gets 405, any other path 404.
public struct ConsoleRoutes: HTTPHandler {
    let hub: ConsoleHub
    let controller: any ControlSession
    private let gate: SiteGate

    /// `history`: the events folder of `--events`, `nil` when the run keeps none.
    public init(
        hub: ConsoleHub, controller: any ControlSession, history: EventStore? = nil, token: AccessToken, rules: SiteRules = SiteRules(),
        log: RefusalLog? = nil
    ) {
        self.hub = hub
        self.controller = controller
        let api = ConsoleAPI(hub: hub, controller: controller)
        let kept = HistoryAPI(store: history)
        var routes = Router { request in .text(.notFound, "no such page: \(ClientText.escaped(request.path)); the console is at /") }
        routes.add("GET", "/") { request in api.page(request, token: token) }
        for file in ConsolePage.files {
            let response = HTTPResponse(status: .ok, headers: ["Content-Type": file.type, "Cache-Control": "no-cache"], body: .bytes(Array(file.text.utf8)))
            routes.add("GET", file.path) { _ in response }
        }
        routes.add("GET", "/stream.mjpg") { _ in api.videoStream() }
        routes.add("GET", "/api/events") { _ in api.eventStream() }
        routes.add("GET", "/api/status") { _ in api.status() }
        routes.add("GET", "/api/settings") { _ in api.settings() }
        routes.add("POST", "/api/settings") { request in api.answer { () throws(ConsoleAPI.Refused) in try api.changeSettings(request) } }
        routes.add("POST", "/api/settings/save") { _ in api.save() }
        routes.add("POST", "/api/aim") { request in api.answer { () throws(ConsoleAPI.Refused) in try api.aim(request) } }
        routes.add("GET", "/api/history") { request in kept.page(request) }
        routes.add("GET", under: "/history/") { request in kept.picture(request) }
        let tokenGate = TokenGate(
            token,
            refusal: .text(
                .unauthorized, "a token is needed: open http://HOST:PORT/?token=TOKEN once (the page keeps it in a cookie), or send Authorization: Bearer TOKEN"
            ),
            log: log, next: routes)
        gate = SiteGate(rules, hostFlag: "--web-allow-host", originFlag: "--web-allow-origin", log: log, next: tokenGate)
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse { gate.respond(to: request) }
}

/// What each route does.
struct ConsoleAPI: Sendable {
    let hub: ConsoleHub
    let controller: any ControlSession

    /// Bodies above this are refused (413) before they are read.
    static let maximumBody = 16 * 1024

    /// What `route` answers, or the answer of the refusal it threw.
    func answer(_ route: () throws(Refused) -> HTTPResponse) -> HTTPResponse {
        do {
            return try route()
        } catch {
            return error.response
        }
    }

    /// The page; opened with `?token=` (the link a user is given), first a redirect to
    /// `/` that sets the token's cookie, so the token leaves the address bar and the
    /// page's requests carry the cookie instead of a URL with the token in it.
    func page(_ request: HTTPRequest, token: AccessToken) -> HTTPResponse {
        if let setCookie = token.setCookie, request.query.contains(where: { $0.name == "token" }) {
            return HTTPResponse(status: .seeOther, headers: ["Location": "/", "Set-Cookie": setCookie, "Cache-Control": "no-store"])
        }
        return HTTPResponse(
            status: .ok,
            headers: [
                "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                "Content-Security-Policy": Self.pagePolicy,
            ],
            body: .bytes(Array(ConsolePage.html.utf8)))
    }

    /// What the page may load and who may frame it: its own files, pictures and requests
    /// only (an injected inline script or a foreign one does not run), and no other site's
    /// page may frame it (a console framed invisibly and clicked through aims the turret).
    static let pagePolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    func videoStream() -> HTTPResponse {
        let hub = hub
        return HTTPResponse(
            status: .ok, headers: ["Content-Type": MJPEGStream.contentType, "Cache-Control": "no-store"], body: .stream { MJPEGStream(hub: hub) })
    }

    func eventStream() -> HTTPResponse {
        let hub = hub
        return HTTPResponse(
            status: .ok, headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-store"], body: .stream { EventStream(hub: hub) })
    }

    func status() -> HTTPResponse {
        var status = hub.status
        status?.settings = controller.settings
        status?.stream = hub.figures
        guard let status else { return Self.json(.serviceUnavailable, ["error": "no frame yet; the camera has not delivered one"]) }
        return Self.json(.ok, status)
    }

    /// The live settings' fields and values, for the page to build its form.
    func settings() -> HTTPResponse {
        struct Settings: Encodable {
            var fields: [SettingField]
            var settings: [String: SettingValue]
        }
        return Self.json(.ok, Settings(fields: controller.fields, settings: controller.settings))
    }

    func save() -> HTTPResponse {
        switch controller.save() {
        case .success(let message):
            hub.log("settings", message)
            return Self.json(.ok, ["saved": message])
        case .failure(let refusal): return Self.json(.internalServerError, ["error": refusal.description])
        }
    }

    // MARK: POST bodies, read as every control source reads them (`ControlRequests`)

    func changeSettings(_ request: HTTPRequest) throws(Refused) -> HTTPResponse {
        let known = Set(controller.settings.keys)
        let changes = try Self.refusing(try Self.body(of: request)) { body throws(ControlRefusal) in
            try ControlRequests.settingChanges(fromJSON: body, known: known)
        }
        switch controller.change(changes) {
        case .success(let settings):
            hub.log("settings", "changed: \(ControlRequests.describe(changes, after: settings))")
            return Self.json(.ok, ["settings": settings])
        case .failure(let refusal):
            return Self.json(.badRequest, ["error": refusal.description])
        }
    }

    func aim(_ request: HTTPRequest) throws(Refused) -> HTTPResponse {
        let frame = hub.status.map { (width: $0.width, height: $0.height) }
        let steering = try Self.refusing(try Self.body(of: request)) { body throws(ControlRefusal) in try ControlRequests.steering(fromJSON: body, frame: frame) }
        controller.steer(steering)
        return Self.json(.accepted, ["action": steering.action])
    }

    /// A request turned down before it is acted on, with its answer.
    struct Refused: Error {
        let response: HTTPResponse
    }

    /// The body (413 above `maximumBody`: the server refuses a larger one before reading it; this holds for a request made in process too).
    static func body(of request: HTTPRequest) throws(Refused) -> [UInt8] {
        guard request.body.count <= maximumBody else {
            throw Refused(response: json(.payloadTooLarge, ["error": "the body is \(request.body.count) bytes; at most \(maximumBody) are taken"]))
        }
        return request.body
    }

    /// What `read` made of the body, or its refusal as the answer: 503 before the first frame, else 400.
    static func refusing<T>(_ body: [UInt8], _ read: ([UInt8]) throws(ControlRefusal) -> T) throws(Refused) -> T {
        do {
            return try read(body)
        } catch {
            throw Refused(response: json(error.isTooEarly ? .serviceUnavailable : .badRequest, ["error": error.description]))
        }
    }

    static func json(_ status: HTTPStatus, _ value: some Encodable) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)).map { Array($0) } ?? Array("{}".utf8)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: .bytes(body))
    }
}
