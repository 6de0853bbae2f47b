import MonotonicTime
import WebSocketFrames

/// The opening handshake of RFC 6455 §4.2.1, held to strictly, and before any
/// handler sees the request: a handler may then answer `.webSocket` only to a
/// request that holds to it (`HTTPRequest.isWebSocketHandshake`).
enum WebSocketHandshake {
    /// The request asks for a WebSocket: its `Upgrade` lists `websocket`. Any other
    /// upgrade (`h2c`) is ignored, as RFC 9110 §7.8 lets a server do.
    static func isAsked(by request: HTTPRequest) -> Bool { request.headers.list("Upgrade", contains: "websocket") }

    /// Throws the refusal for a handshake that breaks a rule: a `GET` over HTTP/1.1 with
    /// `Connection: upgrade`, `Sec-WebSocket-Version: 13` (else 426 saying so) and a key
    /// that is base64 of 16 bytes.
    static func check(_ request: HTTPRequest) throws(HTTPRefusal) {
        guard request.method == "GET", request.version == .http1_1 else {
            throw HTTPRefusal(.badRequest, "a WebSocket handshake is a GET over HTTP/1.1")
        }
        guard request.headers.list("Connection", contains: "upgrade") else {
            throw HTTPRefusal(.badRequest, "a WebSocket handshake needs Connection: Upgrade")
        }
        guard request.headers["Sec-WebSocket-Version"] == "13" else {
            throw HTTPRefusal(
                .upgradeRequired, "this server speaks WebSocket version 13 only; send Sec-WebSocket-Version: 13", headers: ["Sec-WebSocket-Version": "13"])
        }
        guard let key = request.headers["Sec-WebSocket-Key"], isNonce(key) else {
            throw HTTPRefusal(.badRequest, "Sec-WebSocket-Key must be 16 random bytes in base64 (24 characters ending in ==)")
        }
    }

    /// `Sec-WebSocket-Accept` for a request that passed `check`.
    static func acceptValue(for request: HTTPRequest) -> String? {
        request.headers["Sec-WebSocket-Key"].map(WebSocketFrames.acceptValue(forKey:))
    }

    /// Base64 of exactly 16 bytes: 22 digits of its alphabet, the last of which carries
    /// 2 bits and 4 zero ones (so one of `AQgw`), then `==`.
    static func isNonce(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == 0x3D, bytes[23] == 0x3D, let last = base64Value(bytes[21]), last & 0x0F == 0 else { return false }
        return bytes[..<21].allSatisfy { base64Value($0) != nil }
    }

    private static func base64Value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x41...0x5A: byte - 0x41
        case 0x61...0x7A: byte - 0x61 + 26
        case 0x30...0x39: byte - 0x30 + 52
        case 0x2B: 62
        case 0x2F: 63
        default: nil
        }
    }

    /// What a request that is no WebSocket handshake gets from a WebSocket's path.
    static let needed = HTTPRefusal(
        .upgradeRequired, "this path is a WebSocket; connect with one (ws://), e.g. a GET with Upgrade: websocket",
        headers: ["Upgrade": "websocket", "Sec-WebSocket-Version": "13"]
    ).response
}

/// What runs a WebSocket once the server has agreed to the upgrade: on the
/// connection's own thread, until the session returns (the connection then closes).
public protocol WebSocketSession: Sendable {
    func run(_ connection: WebSocketConnection)
}

/// A server's side of one WebSocket: frames in, checked against the server's
/// limits from their headers (a frame over the limit is refused before its
/// payload is read), pings answered, frames out.
public final class WebSocketConnection {
    private let socket: SocketConnection
    private let limits: ServerLimits
    /// Bytes read and not yet taken: never more than one frame and one read.
    private var incoming: [UInt8]
    private var closed = false
    /// When the peer last sent anything, and whether it was pinged since.
    private var lastHeard = monotonicSeconds()
    private var pinged = false
    /// Why the peer's last frame was refused, once one was.
    public private(set) var refusal: WebSocketFrames.Refusal?

    init(_ socket: SocketConnection, leftover: [UInt8], limits: ServerLimits) {
        self.socket = socket
        self.limits = limits
        incoming = leftover
    }

    /// The next data or close frame; pings are answered on the way, and a peer silent for
    /// `webSocketPingSeconds` is pinged. Nil when the connection ended: the peer left,
    /// sent nothing (not even a pong) for `webSocketIdleSeconds`, or sent a frame that
    /// breaks the protocol or the size limit, which is answered with a close frame saying why.
    public func nextFrame() -> WebSocketFrame? {
        while !closed {
            let next: (frame: WebSocketFrame, size: Int)?
            do {
                next = try WebSocketFrames.next(in: incoming[...], from: .client, largestPayload: limits.largestWebSocketFrame)
            } catch {
                refusal = error
                close(code: error.code, reason: error.reason)
                return nil
            }
            if let (frame, size) = next {
                incoming.removeFirst(size)
                if frame.opcode == WebSocketFrame.ping {
                    send(WebSocketFrame(opcode: WebSocketFrame.pong, payload: frame.payload))
                    continue
                }
                if frame.opcode == WebSocketFrame.pong { continue }
                return frame
            }
            let idleEnd = lastHeard + limits.webSocketIdleSeconds
            do {
                incoming += try socket.read(upTo: 4096, until: pinged ? idleEnd : min(idleEnd, lastHeard + limits.webSocketPingSeconds))
                lastHeard = monotonicSeconds()
                pinged = false
            } catch .timedOut where !pinged && monotonicSeconds() < idleEnd {
                pinged = send(WebSocketFrame(opcode: WebSocketFrame.ping, payload: []))
            } catch {
                closed = true
            }
        }
        return nil
    }

    /// Sends `frame`; false once the connection has ended.
    @discardableResult
    public func send(_ frame: WebSocketFrame) -> Bool {
        guard !closed else { return false }
        do {
            try socket.write(WebSocketFrames.encode(frame, from: .server), until: monotonicSeconds() + limits.writeSeconds)
            return true
        } catch {
            closed = true
            return false
        }
    }

    /// Sends a close frame with `code` and `reason`; nothing more is read or sent.
    public func close(code: UInt16, reason: String = "") {
        send(WebSocketFrame(opcode: WebSocketFrame.close, payload: WebSocketFrames.closePayload(code: code, reason: reason)))
        closed = true
    }
}
