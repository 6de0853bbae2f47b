import Glibc
import HTTPTestClient
import LogRecording
import MonotonicTime
import Testing
import WebServing
import WebSocketFrames
import Waiting

/// The head of `reply` (up to its blank line) and what follows.
func split(_ reply: [UInt8]) -> (head: String, body: [UInt8]) {
    guard let end = RequestParsing.endOfHead(in: reply) else { return (text(reply), []) }
    return (text(Array(reply[..<end])), Array(reply[end...]))
}

/// Sends `request` on a new connection and reads the whole answer.
func exchange(_ server: HTTPServer, _ request: String) throws -> (head: String, body: [UInt8]) {
    let client = try RawClient(port: server.port)
    defer { client.close() }
    client.send(request)
    return split(client.readAll())
}

let handshake = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"

@Suite("a hostile client against the server: bodies, handshakes, HEAD, HTTP/1.0, headers, slots", .serialized)
struct HostileClientTests {
    @Test("bytes after a head without Content-Length are no body, whatever Upgrade says: the handler reads 0 bytes")
    func undeclaredBody() throws {
        let server = try startServer()
        defer { server.stop() }
        let reply = try exchange(server, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n{\"deadband\": 5}")
        #expect(reply.head.hasPrefix("HTTP/1.1 200") && text(reply.body) == "hello POST 0\n", "\(reply.head)")
        let declared = try exchange(server, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabcdef")
        #expect(text(declared.body) == "hello POST 3\n")
    }

    @Test(
        "a WebSocket handshake that breaks RFC 6455 is refused before the handler: a bad key, no Connection: upgrade, a POST, HTTP/1.0",
        arguments: [
            "GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(String(repeating: "!", count: 24))\r\nSec-WebSocket-Version: 13\r\n",
            "GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: keep-alive\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n",
            "GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n",
            "POST /socket HTTP/1.1\r\nHost: 127.0.0.1\r\n\(handshake)", "GET /socket HTTP/1.0\r\nHost: 127.0.0.1\r\n\(handshake)",
        ])
    func badHandshakes(_ head: String) throws {
        let server = try startServer()
        defer { server.stop() }
        let reply = try exchange(server, head + "\r\n")
        #expect(reply.head.hasPrefix("HTTP/1.1 400"), "\(reply.head)")
        #expect(server.figures.served == 0 && server.figures.refused == 1)
    }

    @Test("a wrong WebSocket version is 426 with Sec-WebSocket-Version: 13; a plain GET to a WebSocket's path 426 with Upgrade")
    func upgradeRequired() throws {
        let server = try startServer()
        defer { server.stop() }
        let wrongVersion = try exchange(server, "GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\n\(handshake.replacing("Version: 13", with: "Version: 8"))\r\n")
        #expect(wrongVersion.head.hasPrefix("HTTP/1.1 426") && wrongVersion.head.contains("Sec-WebSocket-Version: 13\r\n"), "\(wrongVersion.head)")
        let plain = try exchange(server, "GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(plain.head.hasPrefix("HTTP/1.1 426") && plain.head.contains("Upgrade: websocket\r\n"), "\(plain.head)")
    }

    @Test("Expect: 100-continue gets 100 Continue once the head passed, then the answer to the body sent after it")
    func expectContinue() throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        defer { client.close() }
        client.send("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        let interim = "HTTP/1.1 100 Continue\r\n\r\n"
        #expect(text(client.read(interim.utf8.count)) == interim)
        client.send("abc")
        let reply = split(client.readAll())
        #expect(reply.head.hasPrefix("HTTP/1.1 200") && text(reply.body) == "hello POST 3\n", "\(reply.head)")
        // A body over the limit is refused at once, without the go-ahead.
        let large = try exchange(server, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999\r\nExpect: 100-continue\r\n\r\n")
        #expect(large.head.hasPrefix("HTTP/1.1 413"), "\(large.head)")
    }

    @Test("HEAD is answered as GET is, with the length and without the body; a stream's HEAD ends after its head")
    func head() throws {
        let server = try startServer()
        defer { server.stop() }
        let get = try exchange(server, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let head = try exchange(server, "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(head.head.hasPrefix("HTTP/1.1 200") && head.body.isEmpty, "\(head)")
        #expect(head.head.contains("Content-Length: \(get.body.count)\r\n") && text(get.body) == "hello GET 0\n")
        let stream = try exchange(server, "HEAD /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(stream.head.hasPrefix("HTTP/1.1 200") && stream.body.isEmpty)
    }

    @Test("a stream to an HTTP/1.0 client is not chunked: its bytes until the connection closes")
    func http10() throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        defer { client.close() }
        client.send("GET /stream HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        var reply: [UInt8] = []
        while RequestParsing.endOfHead(in: reply) == nil || reply.count < 3000 { reply += client.read(1024) }
        let (head, body) = split(reply)
        #expect(head.hasPrefix("HTTP/1.1 200") && !head.contains("Transfer-Encoding") && !head.contains("Content-Length"), "\(head)")
        #expect(body.prefix(2048).allSatisfy { $0 == 0x41 }, "no chunk sizes between the pieces")
    }

    @Test("every answer forbids framing and type sniffing, the refusals and the 503 included")
    func frameHeaders() throws {
        let server = try startServer()
        defer { server.stop() }
        for request in ["GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "garbage\r\n\r\n"] {
            let reply = try exchange(server, request)
            #expect(reply.head.contains("X-Frame-Options: DENY\r\n") && reply.head.contains("Content-Security-Policy: frame-ancestors 'none'\r\n"), "\(reply.head)")
            #expect(reply.head.contains("X-Content-Type-Options: nosniff\r\n"))
        }
    }

    @Test("a 401 says WWW-Authenticate: Bearer")
    func bearer() throws {
        let server = try startServer(handler: TokenGate(AccessToken("s3cret"), refusal: .text(.unauthorized, "a token is needed"), next: TestHandler()))
        defer { server.stop() }
        let reply = try exchange(server, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(reply.head.hasPrefix("HTTP/1.1 401") && reply.head.contains("WWW-Authenticate: Bearer realm=\"sentry\"\r\n"), "\(reply.head)")
        #expect(try exchange(server, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret\r\n\r\n").head.hasPrefix("HTTP/1.1 200"))
    }

    @Test("what a refused client sent reaches the log escaped: no line of its own, no terminal escape")
    func logForgery() throws {
        let recorder = LogRecorder()
        let log = RefusalLog(logger: recorder.logger, interval: 0)
        let gate = SiteGate(SiteRules(), hostFlag: "--allow-host", originFlag: "--allow-origin", log: log,
            next: TokenGate(AccessToken("s3cret"), refusal: .text(.unauthorized, "no"), log: log, next: TestHandler()))
        let server = try startServer(handler: gate)
        defer { server.stop() }
        // Refused by the parser: not even a handler's log line.
        for probe in ["GET /x%0AINJECTED%20line HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "GET / HTTP/1.1\r\nHost: \u{1B}[2J\r\n\r\n"] {
            #expect(try exchange(server, probe).head.hasPrefix("HTTP/1.1 400"))
        }
        // Taken by the parser and refused by the gates, which quote it escaped.
        #expect(try exchange(server, "GET /x%E2%80%AEtxt.exe\\ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").head.hasPrefix("HTTP/1.1 401"))
        let foreign = try exchange(server, "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        #expect(foreign.head.hasPrefix("HTTP/1.1 403"))
        let lines = recorder.messages.withLock { $0 }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.contains { $0.contains("GET /x\\xe2\\x80\\xaetxt.exe\\x5c: no token") }, "\(lines)")
        #expect(lines.allSatisfy { $0.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) || $0 == "…" } }, "\(lines)")
    }

    @Test("streams take at most maximumStreams slots: the rest of the clients' slots stay for short requests")
    func streamSlots() throws {
        let server = try startServer { $0.maximumClients = 4 }
        defer { server.stop() }
        #expect(server.limits.maximumStreams == 2)
        let viewers = try (0..<2).map { _ in try RawClient(port: server.port) }
        for viewer in viewers {
            viewer.send("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(text(viewer.read(12)) == "HTTP/1.1 200")
        }
        let third = try exchange(server, "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(third.head.hasPrefix("HTTP/1.1 503") && text(third.body).contains("--test-max-clients"), "\(third)")
        #expect(try exchange(server, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").head.hasPrefix("HTTP/1.1 200"))
        #expect(server.figures.streams == 2)
        viewers[0].close()
        #expect(eventually { server.figures.streams == 1 })
        viewers[1].close()
    }

    @Test("a silent WebSocket is pinged, and closed when even the pong does not come; one that answers pings stays")
    func silentWebSocket() throws {
        let server = try startServer {
            $0.webSocketPingSeconds = 0.2
            $0.webSocketIdleSeconds = 0.6
        }
        defer { server.stop() }
        let silent = try RawClient(port: server.port)
        defer { silent.close() }
        silent.send("GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\n\(handshake)\r\n")
        let started = monotonicSeconds()
        let reply = silent.readAll()
        let (head, frames) = split(reply)
        #expect(head.hasPrefix("HTTP/1.1 101"))
        #expect(frames.first == 0x89, "a ping first: \(frames)")
        #expect(monotonicSeconds() - started < 3 && eventually { server.figures.open == 0 })

        let answering = try RawClient(port: server.port)
        defer { answering.close() }
        answering.send("GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\n\(handshake)\r\n")
        var answer: [UInt8] = []
        while RequestParsing.endOfHead(in: answer) == nil, answer.count < 4096 { answer += answering.read(1) }
        #expect(text(answer).hasPrefix("HTTP/1.1 101"))
        var received: [UInt8] = []
        let until = monotonicSeconds() + 1.5
        while monotonicSeconds() < until {
            while received.count < 2 { received += answering.read(2) }
            #expect(received.prefix(2) == [0x89, 0x00], "\(received)")
            received.removeFirst(2)
            answering.send(WebSocketFrames.encode(WebSocketFrame(opcode: WebSocketFrame.pong, payload: []), from: .client))
        }
        #expect(server.figures.open == 1)
    }
}
