import Logging
import Synchronization
import TurretLinks
import WebServing
import WebSocketFrames

/// `sentry relay`: the original project's Raspberry Pi server, unchanged for
/// its app. A WebSocket server (RFC 6455) takes text messages
/// holding protocol commands, from one controller at a time, and hands the
/// valid ones to the turret (`TurretLink`). Garbage, binary, oversized and
/// non-UTF-8 messages are refused, counted, and answered with a close code;
/// a second controller is turned away; when the controller leaves, however
/// it leaves, the turret is told `--on-exit` (by default: hold still). A
/// shot (`F`) passes only when the relay itself was started with `--fire`
/// (SPEC §8's safety): otherwise the message is refused whole.
public final class RelayServer: Sendable {
    /// What has come in so far.
    public struct Counts: Sendable, Equatable {
        public var connections = 0
        public var messages = 0
        public var refused = 0
        public var turnedAway = 0
    }

    public let token: String?
    /// Who may connect besides by token: the names and pages it answers (`--allow-host`, `--allow-origin`).
    public let rules: SiteRules
    private let controllers: RelayControllers
    private let server: HTTPServer

    /// The default port, as in the original app.
    public static let defaultPort = RelayURL.defaultPort
    /// Connections at once by default (`--max-clients`): one controller, and room to turn others away with a reason.
    public static let defaultMaximumClients = 8

    public var counts: Counts { controllers.counts.withLock { $0 } }
    /// The server's own figures: connections at once, refusals before the upgrade.
    public var figures: HTTPServer.Figures { server.figures }

    /// A server on `address` that writes to `link`; `token`, when given, must
    /// come with every connection (`?token=` or `Authorization: Bearer`).
    public init(
        address: ListenAddress, token: String?, rules: SiteRules = SiteRules(), maximumClients: Int = RelayServer.defaultMaximumClients,
        armed: Bool = false, link: TurretLink, logger: Logger
    ) {
        self.token = token
        self.rules = rules
        controllers = RelayControllers(link: link, armed: armed, logger: logger)
        var limits = ServerLimits(maximumClients: maximumClients, clientsFlag: "--max-clients")
        // A message larger than the relay takes is refused from its frame's header, before its payload is read.
        limits.largestWebSocketFrame = RelayVerdict.maximumSize
        limits.maximumBodyBytes = 0
        // The host, the origin and the token are checked before the upgrade, by the gates the console uses too.
        let log = RefusalLog(logger: logger)
        let tokenGate = TokenGate(
            AccessToken(token), refusal: .text(.unauthorized, "a token is needed: ws://HOST:PORT/?token=TOKEN or Authorization: Bearer TOKEN"),
            log: log, next: RelayUpgrade(controllers: controllers))
        let gate = SiteGate(rules, hostFlag: "--allow-host", originFlag: "--allow-origin", log: log, next: tokenGate)
        server = HTTPServer(address: address, limits: limits, name: "sentry-relay", logger: logger, handler: gate)
    }

    /// Starts serving in the background and returns once the socket
    /// listens; throws a one-line `RelayError` when it cannot (a port in use).
    public func start() throws(RelayError) {
        do {
            try server.start()
        } catch {
            throw RelayError("\(server.address): cannot listen (\(error.description)); is something else using the port? pick another with --listen")
        }
    }

    /// Where it listens once started: the port the system chose for port 0.
    public var listening: ListenAddress {
        var bound = server.address
        bound.port = server.port
        return bound
    }

    /// Stops listening and closes every connection.
    public func stop() {
        server.stop()
    }
}

/// Why the relay could not start, in one line.
public struct RelayError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The one controller at a time, what it sent, and the turret it drives.
final class RelayControllers: Sendable {
    let counts = Mutex(RelayServer.Counts())
    private let taken = Mutex(false)
    private let link: TurretLink
    /// Started with `--fire`: shots pass.
    let armed: Bool
    private let logger: Logger

    init(link: TurretLink, armed: Bool, logger: Logger) {
        self.link = link
        self.armed = armed
        self.logger = logger
    }

    /// Takes the controller's place; false when another holds it.
    func claim() -> Bool {
        let claimed = taken.withLock { taken in
            guard !taken else { return false }
            taken = true
            return true
        }
        counts.withLock { claimed ? ($0.connections += 1) : ($0.turnedAway += 1) }
        return claimed
    }

    /// The controller left: the turret is told `--on-exit`.
    func release() {
        taken.withLock { $0 = false }
        link.release()
        logger.notice("relay: the controller left; the turret is told --on-exit")
    }

    func received(_ verdict: RelayVerdict) {
        counts.withLock { counts in
            counts.messages += 1
            if case .refused = verdict { counts.refused += 1 }
        }
        switch verdict {
        case .commands(let commands): link.send(commands)
        case .refused(let code, let reason): logger.warning("relay: message refused (\(code)): \(reason)")
        }
    }
}

/// Every request that passed the gates: a WebSocket upgrade to the relay.
struct RelayUpgrade: HTTPHandler {
    let controllers: RelayControllers

    func respond(to request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(status: .switchingProtocols, body: .webSocket(RelaySession(controllers: controllers)))
    }
}

/// One connection's messages, judged one at a time.
struct RelaySession: WebSocketSession {
    let controllers: RelayControllers

    func run(_ connection: WebSocketConnection) {
        guard controllers.claim() else {
            connection.close(code: 1013, reason: "another controller is connected; one at a time")
            return
        }
        // However the connection ends (a close, a refusal, a break mid-message), the turret is told L.
        defer { controllers.release() }
        while let frame = connection.nextFrame() {
            if frame.opcode == WebSocketFrame.close {
                connection.close(code: 1000)
                return
            }
            let verdict: RelayVerdict =
                switch frame.opcode {
                case WebSocketFrame.text where frame.fin: .text(frame.payload, armed: controllers.armed)
                case WebSocketFrame.binary: .binary
                default: .refused(code: 1009, reason: "fragmented messages are not taken; send each message whole")
                }
            controllers.received(verdict)
            if case .refused(let code, let reason) = verdict {
                connection.close(code: code, reason: reason)
                return
            }
        }
        // A frame over the size limit or against the protocol, refused from its header.
        if let refusal = connection.refusal { controllers.received(.refused(code: refusal.code, reason: refusal.reason)) }
    }
}
