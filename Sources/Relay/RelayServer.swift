import FlyingFox
import FlyingSocks
import Foundation
import Logging
import Synchronization
import TurretLinks
import WebServing

/// `sentry relay`: the original project's Raspberry Pi server, unchanged for
/// its app. A WebSocket server (RFC 6455, FlyingFox) takes text messages
/// holding protocol commands, from one controller at a time, and hands the
/// valid ones to the turret (`TurretLink`). Garbage, binary, oversized and
/// non-UTF-8 messages are refused, counted, and answered with a close code;
/// a second controller is turned away; when the controller leaves, however
/// it leaves, the turret is told `L`.
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
    private let link: TurretLink
    private let logger: Logger
    private let server: HTTPServer
    private let controller = Mutex(false)
    private let countsState = Mutex(Counts())

    /// The default port, as in the original app.
    public static let defaultPort = RelayURL.defaultPort

    public var counts: Counts { countsState.withLock { $0 } }

    /// A server on `host:port` (IPv4) that writes to `link`; `token`, when
    /// given, must come with every connection (`?token=` or `Authorization: Bearer`).
    public init(host: String, port: UInt16, token: String?, rules: SiteRules = SiteRules(), link: TurretLink, logger: Logger) throws {
        self.token = token
        self.rules = rules
        self.link = link
        self.logger = logger
        server = HTTPServer(address: try .inet(ip4: host, port: port), timeout: 3600, logger: .disabled)
    }

    /// Starts serving in the background and returns once the socket
    /// listens; throws a one-line `RelayError` when it cannot (a port in use).
    public func start() throws(RelayError) {
        do {
            let server = server
            // The host, the origin and the token are checked before the upgrade, by the gates the console uses too.
            let log = RefusalLog(logger: logger)
            let tokenGate = TokenGate(
                AccessToken(token),
                refusal: HTTPResponse(
                    statusCode: .unauthorized, body: Data("a token is needed: ws://HOST:PORT/?token=TOKEN or Authorization: Bearer TOKEN\n".utf8)),
                log: log, next: WebSocketHTTPHandler(handler: RelayFrames(relay: self)))
            let handler = SiteGate(rules, hostFlag: "--allow-host", originFlag: "--allow-origin", log: log, next: tokenGate)
            let routed = DispatchSemaphore(value: 0)
            Task {
                await server.appendRoute("GET *", to: handler)
                routed.signal()
            }
            routed.wait()
            try server.startInBackground()
        } catch {
            throw RelayError(error.description)
        }
    }

    /// Stops listening and closes every connection.
    public func stop() {
        server.stopAndWait()
    }

    /// Takes the controller's place; false when another holds it.
    func claimController() -> Bool {
        let claimed = controller.withLock { taken in
            guard !taken else { return false }
            taken = true
            return true
        }
        countsState.withLock { claimed ? ($0.connections += 1) : ($0.turnedAway += 1) }
        return claimed
    }

    /// The controller left: the turret sweeps.
    func releaseController() {
        controller.withLock { $0 = false }
        link.send([.lost])
        logger.notice("relay: the controller left; the turret is told L")
    }

    func received(_ verdict: RelayVerdict) {
        countsState.withLock { counts in
            counts.messages += 1
            if case .refused = verdict { counts.refused += 1 }
        }
        switch verdict {
        case .commands(let commands): link.send(commands)
        case .refused(let code, let reason): logger.warning("relay: message refused (\(code)): \(reason)")
        }
    }
}

/// Why the relay could not start, in one line.
public struct RelayError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One connection's frames: judged one message at a time.
struct RelayFrames: WSHandler {
    let relay: RelayServer

    func makeFrames(for client: AsyncThrowingStream<WSFrame, any Error>) async throws -> AsyncStream<WSFrame> {
        let (frames, out) = AsyncStream<WSFrame>.makeStream()
        guard relay.claimController() else {
            out.yield(.close(code: WSCloseCode(1013, reason: "another controller is connected; one at a time")))
            out.finish()
            return frames
        }
        let relay = relay
        Task {
            defer {
                relay.releaseController()
                out.finish()
            }
            do {
                for try await frame in client {
                    switch frame.opcode {
                    case .ping:
                        out.yield(WSFrame(fin: true, opcode: .pong, mask: nil, payload: frame.payload))
                    case .pong:
                        continue
                    case .close:
                        out.yield(.close(code: WSCloseCode(1000)))
                        return
                    default:
                        let verdict: RelayVerdict =
                            switch frame.opcode {
                            case .text where frame.fin: .text(Array(frame.payload))
                            case .binary: .binary
                            default: .refused(code: 1009, reason: "fragmented messages are not taken; send each message whole")
                            }
                        relay.received(verdict)
                        if case .refused(let code, let reason) = verdict {
                            out.yield(.close(code: WSCloseCode(code, reason: reason)))
                            return
                        }
                    }
                }
            } catch {
                // The connection broke (mid-message, too): the defer tells the turret L.
            }
        }
        return frames
    }
}
