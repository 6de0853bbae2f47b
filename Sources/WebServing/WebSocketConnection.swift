import MonotonicTime
import WebSocketFrames

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
    /// Why the peer's last frame was refused, once one was.
    public private(set) var refusal: WebSocketFrames.Refusal?

    init(_ socket: SocketConnection, leftover: [UInt8], limits: ServerLimits) {
        self.socket = socket
        self.limits = limits
        incoming = leftover
    }

    /// `Sec-WebSocket-Accept` for a valid upgrade request (RFC 6455 §4.2.1), or nil.
    static func acceptValue(for request: HTTPRequest) -> String? {
        guard request.method == "GET", request.headers["Upgrade"]?.lowercased().contains("websocket") == true,
            request.headers["Sec-WebSocket-Version"] == "13", let key = request.headers["Sec-WebSocket-Key"], key.utf8.count == 24
        else { return nil }
        return WebSocketFrames.acceptValue(forKey: key)
    }

    /// The next data or close frame; pings are answered on the way. Nil when the
    /// connection ended: the peer left or went quiet for `webSocketIdleSeconds`,
    /// or sent a frame that breaks the protocol or the size limit, which is
    /// answered with a close frame saying why.
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
            do {
                incoming += try socket.read(upTo: 4096, until: monotonicSeconds() + limits.webSocketIdleSeconds)
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
