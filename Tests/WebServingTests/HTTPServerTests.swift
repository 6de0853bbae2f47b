import Foundation
import Glibc
import HTTPTestClient
import MonotonicTime
import Synchronization
import Testing
import WebServing
import WebSocketFrames
import Waiting

/// Answers `/` with a line and `/stream` with a body that never ends, in pieces of `piece` bytes.
struct TestHandler: HTTPHandler {
    var piece = 1024

    func respond(to request: HTTPRequest) -> HTTPResponse {
        switch request.path {
        case "/stream":
            let piece = piece
            return HTTPResponse(status: .ok, body: .stream { EndlessStream(piece: piece) })
        case "/socket":
            return HTTPResponse(status: .switchingProtocols, body: .webSocket(EchoSession()))
        default:
            return .text(.ok, "hello \(request.method) \(request.body.count)")
        }
    }

    struct EndlessStream: ResponseStream {
        let piece: Int
        mutating func next() -> [UInt8]? {
            usleep(2_000)
            return [UInt8](repeating: 0x41, count: piece)
        }
    }

    struct EchoSession: WebSocketSession {
        func run(_ connection: WebSocketConnection) {
            while let frame = connection.nextFrame(), frame.opcode != WebSocketFrame.close { connection.send(frame) }
        }
    }
}

func startServer(_ configure: (inout ServerLimits) -> Void = { _ in }, handler: any HTTPHandler = TestHandler()) throws -> HTTPServer {
    var limits = ServerLimits(maximumClients: 2, clientsFlag: "--test-max-clients")
    configure(&limits)
    var address = try #require(ListenAddress(parsing: "127.0.0.1:1"))
    address.port = 0
    let server = HTTPServer(address: address, limits: limits, name: "test-server", handler: handler)
    try server.start()
    return server
}

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite("the servers' limits: every client costs a bounded amount, and a refused one is told why")
struct HTTPServerTests {
    @Test("a request is answered with its length and Connection: close")
    func answers() throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc")
        let reply = text(client.readAll())
        #expect(reply.hasPrefix("HTTP/1.1 200 OK\r\n") && reply.contains("Connection: close\r\n") && reply.hasSuffix("hello POST 3\n"), "\(reply)")
        client.close()
    }

    @Test("more clients than the limit are answered 503 naming the flag, without a thread; a slot frees when a client leaves")
    func tooManyClients() throws {
        let server = try startServer { $0.maximumStreams = 2 }
        defer { server.stop() }
        let viewers = try (0..<2).map { _ in try RawClient(port: server.port) }
        for viewer in viewers {
            viewer.send("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(text(viewer.read(12)) == "HTTP/1.1 200")
        }
        let third = try RawClient(port: server.port)
        let refusal = text(third.readAll())
        #expect(refusal.hasPrefix("HTTP/1.1 503") && refusal.contains("--test-max-clients"), "\(refusal)")
        #expect(server.figures.busy == 1 && server.figures.open == 2)
        viewers[0].close()
        #expect(eventually { server.figures.open == 1 })
        let fourth = try RawClient(port: server.port)
        fourth.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(text(fourth.readAll()).hasPrefix("HTTP/1.1 200"))
        viewers[1].close()
    }

    @Test(
        "a head over 16 KiB is 431, a body announced over the limit 413 before it is sent, a chunked body 411, garbage 400",
        arguments: [
            ("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Fill: " + String(repeating: "a", count: 65536) + "\r\n\r\n", "431"),
            ("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10485760\r\n\r\n", "413"),
            ("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "411"),
            ("GET / HTTP/1.1\r\n\r\n", "400"),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "400"),
            ("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}\u{fc}\u{03}\u{03}\r\n\r\n", "400"),
            ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", "505"),
        ])
    func refusedRequests(_ request: String, status: String) throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(request)
        let reply = text(client.readAll())
        #expect(reply.hasPrefix("HTTP/1.1 \(status)"), "\(reply.prefix(200))")
        #expect(server.figures.refused == 1 && server.figures.served == 0)
        client.close()
    }

    @Test("a client that sends its head too slowly gets 408 and its slot back")
    func slowHeader() throws {
        let server = try startServer { $0.requestSeconds = 0.3 }
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: 12")
        let started = monotonicSeconds()
        let reply = text(client.readAll())
        #expect(reply.hasPrefix("HTTP/1.1 408"), "\(reply)")
        #expect(monotonicSeconds() - started < 3)
        #expect(eventually { server.figures.open == 0 })
        client.close()
    }

    @Test("a viewer that never reads is dropped at the write deadline, and its slot comes back")
    func neverReads() throws {
        let server = try startServer({ $0.writeSeconds = 0.3 }, handler: TestHandler(piece: 65536))
        defer { server.stop() }
        let stuck = try RawClient(port: server.port)
        stuck.send("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(eventually { server.figures.open == 1 })
        #expect(eventually(within: 10) { server.figures.open == 0 })
        stuck.close()
    }

    @Test("a WebSocket echoes, and a frame over the limit is refused with 1009 from its header, before its payload")
    func webSocketLimit() throws {
        let server = try startServer { $0.largestWebSocketFrame = 1024 }
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(
            "GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        var head: [UInt8] = []
        while !text(head).hasSuffix("\r\n\r\n"), head.count < 4096 {
            let byte = client.read(1)
            guard !byte.isEmpty else { break }
            head += byte
        }
        #expect(text(head).hasPrefix("HTTP/1.1 101") && text(head).contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "\(text(head))")
        client.send(WebSocketFrames.encode(WebSocketFrame(opcode: WebSocketFrame.text, payload: Array("X90.".utf8)), from: .client))
        #expect(client.read(6) == [0x81, 0x04] + Array("X90.".utf8))
        // A header announcing 100 MB, and no payload: the answer comes at once.
        client.send([0x81, 0xFF, 0, 0, 0, 0, 0x06, 0x40, 0, 0, 1, 2, 3, 4])
        let close = client.readAll()
        #expect(close.count >= 4 && close[0] == 0x88 && Int(close[2]) << 8 | Int(close[3]) == 1009, "\(close)")
        client.close()
    }

    @Test("300 connections that send nothing cost at most the limit's threads; the rest are answered 503 and closed; then a client is served")
    func silentFlood() throws {
        let server = try startServer { $0.requestSeconds = 0.5 }
        defer { server.stop() }
        let silent = try (0..<300).map { _ in try RawClient(port: server.port) }
        #expect(eventually { server.figures.busy + server.figures.refused + server.figures.open >= 300 }, "\(server.figures)")
        #expect(server.figures.peak <= 2)
        for client in silent { client.close() }
        #expect(eventually { server.figures.open == 0 })
        let client = try RawClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(text(client.readAll()).hasPrefix("HTTP/1.1 200"))
        client.close()
    }

    @Test("stop ends streams and WebSockets at once and frees the port")
    func stopEndsEverything() throws {
        let server = try startServer()
        let viewer = try RawClient(port: server.port)
        viewer.send("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(text(viewer.read(12)) == "HTTP/1.1 200")
        let started = monotonicSeconds()
        server.stop()
        #expect(monotonicSeconds() - started < 2)
        #expect(server.figures.open == 0)
        server.stop()  // again: nothing left to stop, and no wait
        viewer.close()
    }

    @Test("stopped while clients keep connecting, every connection ends: none is accepted after the stop and left streaming")
    func stopDuringAccepts() throws {
        for round in 0..<20 {
            let server = try startServer {
                $0.maximumClients = 64
                $0.maximumStreams = 64
            }
            let port = server.port
            let clients = Mutex<[RawClient]>([])
            let connecting = Atomic(true)
            let stoppedConnecting = DispatchSemaphore(value: 0)
            for _ in 0..<2 {
                Thread.detachNewThread {
                    while connecting.load(ordering: .relaxed) {
                        guard let client = try? RawClient(port: port) else { continue }
                        client.send("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                        clients.withLock { $0.append(client) }
                    }
                    stoppedConnecting.signal()
                }
            }
            #expect(eventually { clients.withLock { $0.count >= 4 } })
            server.stop()
            connecting.store(false, ordering: .relaxed)
            for _ in 0..<2 { stoppedConnecting.wait() }
            // A stream the server still serves would fill the 4 MiB; a closed one ends at once.
            for client in clients.withLock({ $0 }) {
                #expect(client.readAll(limit: 4 << 20).count < 4 << 20, "round \(round): a connection outlived stop()")
                client.close()
            }
            #expect(server.figures.open == 0, "round \(round)")
        }
    }
}

@Suite("request heads, parsed strictly")
struct RequestParsingTests {
    @Test("the path, the query decoded, the fields with their case, the body's length")
    func parses() throws {
        let head = Array("GET /api/status?token=a%20b+c&x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Thing:  spaced  \r\n\r\n".utf8)
        let (request, length) = try RequestParsing.parse(head: head[...], peer: "p")
        #expect(request.method == "GET" && request.path == "/api/status" && length == 0)
        #expect(request.query == [.init(name: "token", value: "a b c"), .init(name: "x", value: "")])
        #expect(request.headers["host"] == "127.0.0.1:8080" && request.headers["x-thing"] == "spaced")
    }

    @Test("the head's end is found however the bytes arrive, the blank line split across reads included")
    func endOfHead() {
        let head = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\nbody".utf8)
        for cut in 0...head.count {
            // What the server does: a look after the first part, then one from where it left off.
            let first = RequestParsing.endOfHead(in: Array(head[..<cut]))
            let end = first ?? RequestParsing.endOfHead(in: head, from: cut)
            #expect(end == head.count - 4, "cut at \(cut)")
        }
        #expect(RequestParsing.endOfHead(in: Array("GET / HTTP/1.1\r\n".utf8)) == nil)
    }

    @Test("percent escapes decode and encode back; a bad one is refused")
    func percent() {
        #expect(RequestParsing.percentDecoded("s3%20cret%3B%3D") == "s3 cret;=")
        #expect(RequestParsing.percentEncoded("s3 cret;=") == "s3%20cret%3B%3D")
        #expect(RequestParsing.percentDecoded("%zz") == nil && RequestParsing.percentDecoded("%4") == nil)
    }
}
