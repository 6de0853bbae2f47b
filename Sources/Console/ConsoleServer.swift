import Events
import FoundationEssentials
import Logging
import Tracking
import WebServing

/// What the console may ask of the running sentry. The answers come at
/// once (validated, or refused with the flag's own message); the frame
/// loop applies them before its next frame.
public protocol ConsoleController: Sendable {
    /// The settings that can change while running, by long flag name.
    var settings: [String: String] { get }
    /// How the page shows each of them, in its order.
    var fields: [SettingField] { get }
    /// Validates `changes` with the rest as they are, exactly as the flags
    /// are; on success they take effect from the next frame. Returns the
    /// settings after the change.
    func change(_ changes: [String: String]) -> Result<[String: String], ConsoleRefusal>
    /// Writes the settings to the config file; says where (and what a flag overrides).
    func save() -> Result<String, ConsoleRefusal>
    /// Hands the turret to a person, or back to face tracking.
    func steer(_ request: SteeringRequest)
}

/// A request the console turns down, in one line.
public struct ConsoleRefusal: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

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
        hub: ConsoleHub, controller: any ConsoleController, history: EventStore? = nil, log: RefusalLog? = nil
    ) {
        self.address = address
        let routes = ConsoleRoutes(
            hub: hub, controller: controller, history: history, token: AccessToken(token, cookieName: "sentry_token_\(address.port)"), rules: rules,
            log: log)
        var limits = ServerLimits(maximumClients: maximumClients, clientsFlag: "--web-max-clients")
        limits.maximumBodyBytes = ConsoleAPI.maximumBody
        server = HTTPServer(address: address, limits: limits, name: "sentry-web", handler: routes)
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
    let controller: any ConsoleController
    private let gate: SiteGate

    /// `history`: the events folder of `--events`, `nil` when the run keeps none.
    public init(
        hub: ConsoleHub, controller: any ConsoleController, history: EventStore? = nil, token: AccessToken, rules: SiteRules = SiteRules(),
        log: RefusalLog? = nil
    ) {
        self.hub = hub
        self.controller = controller
        let api = ConsoleAPI(hub: hub, controller: controller)
        let kept = HistoryAPI(store: history)
        var routes = Router { request in .text(.notFound, "no such page: \(request.path); the console is at /") }
        routes.add("GET", "/") { request in api.page(request, token: token) }
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
    let controller: any ConsoleController

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
            status: .ok, headers: ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"],
            body: .bytes(Array(ConsolePage.html.utf8)))
    }

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
            var settings: [String: String]
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

    // MARK: POST bodies

    /// A JSON value a setting may take.
    enum Scalar: Decodable {
        case bool(Bool)
        case integer(Int)
        case number(Double)
        case text(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int.self) {
                self = .integer(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        /// As it would be typed after the flag.
        var argument: String {
            switch self {
            case .bool(let value): String(value)
            case .integer(let value): String(value)
            case .number(let value): String(value)
            case .text(let value): value
            }
        }
    }

    func changeSettings(_ request: HTTPRequest) throws(Refused) -> HTTPResponse {
        let changes = try Self.decode([String: Scalar].self, from: request)
        guard !changes.isEmpty else { return Self.json(.badRequest, ["error": "no settings given; send e.g. {\"offset\": 30}"]) }
        let known = controller.settings
        if let unknown = changes.keys.sorted().first(where: { known[$0] == nil }) {
            return Self.json(.badRequest, ["error": "'\(unknown)' cannot be changed while running; these can: \(known.keys.sorted().joined(separator: ", "))"])
        }
        switch controller.change(changes.mapValues(\.argument)) {
        case .success(let settings):
            let said = changes.keys.sorted().map { "\($0) = \(settings[$0] ?? "")" }.joined(separator: ", ")
            hub.log("settings", "changed: \(said)")
            return Self.json(.ok, ["settings": settings])
        case .failure(let refusal):
            return Self.json(.badRequest, ["error": refusal.description])
        }
    }

    struct AimBody: Decodable {
        var action: String
        var x: Double?
        var y: Double?
        var pan: Int?
        var tilt: Int?
    }

    func aim(_ request: HTTPRequest) throws(Refused) -> HTTPResponse {
        let body = try Self.decode(AimBody.self, from: request)
        let steering: SteeringRequest
        switch body.action {
        case "point":
            guard let frame = hub.status else { return Self.json(.serviceUnavailable, ["error": "no frame yet to aim in"]) }
            guard let x = body.x, let y = body.y, x.isFinite, y.isFinite,
                (0...Double(frame.width)).contains(x), (0...Double(frame.height)).contains(y)
            else {
                return Self.json(
                    .badRequest,
                    ["error": "point needs x and y inside the \(frame.width)x\(frame.height) frame, e.g. {\"action\":\"point\",\"x\":320,\"y\":240}"])
            }
            steering = .point(x: x, y: y)
        case "nudge":
            let pan = body.pan ?? 0, tilt = body.tilt ?? 0
            guard (-180...180).contains(pan), (-180...180).contains(tilt) else {
                return Self.json(.badRequest, ["error": "nudge takes pan and tilt in degrees between -180 and 180, e.g. {\"action\":\"nudge\",\"pan\":2}"])
            }
            steering = .nudge(pan: pan, tilt: tilt)
        case "scan": steering = .scan
        case "center": steering = .center
        case "auto": steering = .auto
        default:
            return Self.json(.badRequest, ["error": "action '\(body.action)' is not one of point, nudge, scan, center, auto"])
        }
        controller.steer(steering)
        return Self.json(.accepted, ["action": body.action])
    }

    /// A request turned down before it is acted on, with its answer.
    struct Refused: Error {
        let response: HTTPResponse
    }

    /// The body as `T`; throws `Refused` when it is too large, not JSON or of the wrong shape.
    static func decode<T: Decodable>(_ type: T.Type, from request: HTTPRequest) throws(Refused) -> T {
        // The server refuses a larger body before reading it; this holds for a request made in process too.
        if request.body.count > maximumBody {
            throw Refused(response: json(.payloadTooLarge, ["error": "the body is \(request.body.count) bytes; at most \(maximumBody) are taken"]))
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(request.body))
        } catch {
            throw Refused(response: json(.badRequest, ["error": "the body is not the JSON expected (\(Self.reason(error))); send e.g. {\"offset\": 30}"]))
        }
    }

    static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "'\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
        case DecodingError.dataCorrupted: "not valid JSON"
        default: "\(error)"
        }
    }

    static func json(_ status: HTTPStatus, _ value: some Encodable) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)).map { Array($0) } ?? Array("{}".utf8)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: .bytes(body))
    }
}
