import Testing

@testable import WebServing

/// Parses `head` (a blank line is added) as the server does.
func parsed(_ head: String) throws(HTTPRefusal) -> (request: HTTPRequest, bodyLength: Int) {
    let bytes = Array((head + "\r\n\r\n").utf8)
    return try RequestParsing.parse(head: bytes[...], peer: "test")
}

/// The status a head is refused with, nil when it is taken.
func refusal(_ head: String) -> Int? {
    do {
        _ = try parsed(head)
        return nil
    } catch {
        return error.status.code
    }
}

@Suite("request heads are bytes: what a lenient server took is refused")
struct StrictParsingTests {
    @Test(
        "Content-Length is digits alone, once: a sign, Unicode or control spaces, a list, a second field are 400",
        arguments: ["+2", "-0", "2\u{0B}", "2\u{0C}", "\u{85}2", "2, 2", "0x2", "1e3", "", "１", "9999999999"])
    func contentLength(_ value: String) {
        #expect(refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \(value)") == 400, "\(value.unicodeScalars.map(\.value))")
    }

    @Test("Content-Length with spaces or tabs around it, in any case of its name, is taken")
    func contentLengthTaken() throws {
        let (_, length) = try parsed("POST / HTTP/1.1\r\nHost: a\r\ncontent-LENGTH: \t 12 \t")
        #expect(length == 12)
        #expect(refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1") == 400)
    }

    @Test(
        "control bytes, NUL, bare CR or LF, folded lines and spaces before the colon are refused anywhere in the head",
        arguments: [
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\u{0B}", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b", "GET / HTTP/1.1\nHost: a",
            "GET / HTTP/1.1\r\nHost: a\rX: b", "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n folded", "GET / HTTP/1.1\r\nHost : a",
            "GET / HTTP/1.1\r\nHost: a\r\nX: \u{1B}[2J", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{85}b", "GET / HTTP/1.1\r\nHost: a\r\nX: \u{2028}",
            "GET / HTTP/1.1\r\nHost: \u{1B}[2Jevil",
        ])
    func controlBytes(_ head: String) {
        #expect(refusal(head) == 400, "\(head.debugDescription)")
    }

    @Test("names are tokens compared in ASCII case: a Kelvin sign is no k, so Coo\u{212A}ie is refused, never read as Cookie")
    func asciiNames() throws {
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nCoo\u{212A}ie: sentry_token=x") == 400)
        let (request, _) = try parsed("GET / HTTP/1.1\r\nHOST: a\r\ncOOKIE: k=v")
        #expect(request.headers["Cookie"] == "k=v" && request.headers["host"] == "a")
        let kelvin = HTTPHeaders([(name: "Coo\u{212A}ie", value: "x")])
        #expect(kelvin["Cookie"] == nil)
    }

    @Test(
        "a field that means one thing, twice, is refused: no choosing between two Hosts, tokens or cookies",
        arguments: ["Host: b", "Authorization: Bearer a\r\nAuthorization: Bearer b", "Cookie: a=1\r\nCookie: b=2", "Origin: x\r\nOrigin: y",
            "Content-Type: a/b\r\nContent-Type: c/d", "Sec-WebSocket-Key: a\r\nSec-WebSocket-Key: b"])
    func singleFields(_ fields: String) {
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\n\(fields)") == 400)
    }

    @Test(
        "Host is HOST[:PORT]: names, IPv4 and bracketed IPv6 with a port of digits",
        arguments: [("127.0.0.1", true), ("localhost:8080", true), ("[::1]:80", true), ("[::1]", true), ("sentry.local", true),
            ("a b", false), ("a:", false), ("a:8o", false), ("a:123456", false), ("user@a", false), ("a/b", false), ("[::1", false), ("", false)])
    func host(_ value: String, taken: Bool) {
        #expect((refusal("GET / HTTP/1.1\r\nHost: \(value)") == nil) == taken, "\(value)")
    }

    @Test(
        "percent escapes are % and two hex digits; %+f, %-0, or one that decodes to a control byte or not UTF-8 is 400",
        arguments: ["/%+f", "/%-0", "/%4", "/%zz", "/x%0AINJECTED%20line", "/%1B[2J", "/%C2%85", "/%E2%80%A8", "/%FF", "/?token=%0A", "/?a=%+1"])
    func percent(_ target: String) {
        #expect(refusal("GET \(target) HTTP/1.1\r\nHost: a") == 400, "\(target)")
    }

    @Test("a path's escapes and a query's + decode; a lone ? and empty items are fine")
    func decodes() throws {
        let (request, _) = try parsed("GET /a%20b%2Fc?x=1+2&y=%41&&z HTTP/1.1\r\nHost: a")
        #expect(request.path == "/a b/c")
        #expect(request.query == [.init(name: "x", value: "1 2"), .init(name: "y", value: "A"), .init(name: "z", value: "")])
        #expect(try parsed("GET /? HTTP/1.1\r\nHost: a").request.query.isEmpty)
    }

    @Test(
        "the request line is METHOD SP /path SP HTTP/1.x; HTTP/1.0 is taken, another digit version 505, anything else 400",
        arguments: [("G(T / HTTP/1.1", 400), ("GET  / HTTP/1.1", 400), ("GET / http/1.1", 400), ("GET / HTTP/1.1 ", 400), ("GET x HTTP/1.1", 400),
            ("GET /#f HTTP/1.1", 400), ("GET https://a/ HTTP/1.1", 400), ("GET http://u@a/ HTTP/1.1", 400), ("GET http:///x HTTP/1.1", 400),
            ("GET http://a b/ HTTP/1.1", 400), ("GET http://a:x/ HTTP/1.1", 400), ("GET ftp://a/ HTTP/1.1", 400), ("GET * HTTP/1.1", 400),
            ("GET / HTTP/1.2", 505), ("GET / HTTP/2.0", 505), ("GET / HTTP/1.10", 400)])
    func requestLine(_ line: String, status: Int) {
        #expect(refusal("\(line)\r\nHost: a") == status, "\(line)")
    }

    @Test("an absolute-form target is taken as its path, its authority in place of Host (RFC 9112 §3.2.2)")
    func absoluteForm() throws {
        let request = try parsed("GET HTTP://pi.local:8080/api/status?token=a%20b HTTP/1.1\r\nHost: other").request
        #expect(request.path == "/api/status" && request.query.first?.value == "a b")
        #expect(request.headers["Host"] == "pi.local:8080" && request.headers.count(of: "Host") == 1)
        #expect(try parsed("GET http://[::1]:8080 HTTP/1.1\r\nHost: a").request.path == "/")
        #expect(try parsed("GET http://a?x=1 HTTP/1.1\r\nHost: a").request.query.first?.value == "1")
        #expect(refusal("GET http://a/ HTTP/1.1") == 400, "a Host field is still required of HTTP/1.1")
    }

    @Test("HTTP/1.0 is read as such")
    func version() throws {
        #expect(try parsed("GET / HTTP/1.0\r\nHost: a").request.version == .http1_0)
        #expect(try parsed("GET / HTTP/1.1\r\nHost: a").request.version == .http1_1)
    }

    @Test("what a client sent reaches a log or a reply as printable ASCII: newlines, escapes, backslashes and Unicode as \\x")
    func escaping() {
        #expect(ClientText.escaped("/x\nINJECTED line") == "/x\\x0aINJECTED line")
        #expect(ClientText.escaped("\u{1B}[2J\\") == "\\x1b[2J\\x5c")
        #expect(ClientText.escaped("\u{202E}evil") == "\\xe2\\x80\\xaeevil")
        #expect(ClientText.escaped(String(repeating: "a", count: 200), limit: 10) == "aaaaaaaaaa…")
        #expect("a\nb\u{85}c\u{1B}".oneLine == "a\\u{a}b\\u{85}c\\u{1b}")
    }

    @Test("a WebSocket key must be base64 of 16 bytes")
    func nonce() {
        #expect(WebSocketHandshake.isNonce("dGhlIHNhbXBsZSBub25jZQ=="))
        #expect(WebSocketHandshake.isNonce("AAAAAAAAAAAAAAAAAAAAAA=="))
        for key in [String(repeating: "!", count: 24), "dGhlIHNhbXBsZSBub25jZR==", "dGhlIHNhbXBsZSBub25jZQ=", "dGhlIHNhbXBsZSBub25jZQ==x", "dGhlIHNhbXBsZSBub25jZQ.="] {
            #expect(!WebSocketHandshake.isNonce(key), "\(key)")
        }
    }

    @Test("the token is compared as bytes: a canonically equal spelling is another token")
    func tokenBytes() {
        let token = AccessToken("caf\u{E9}")
        #expect(token.admits(HTTPRequest(method: "GET", path: "/", query: [.init(name: "token", value: "caf\u{E9}")])))
        #expect(!token.admits(HTTPRequest(method: "GET", path: "/", query: [.init(name: "token", value: "cafe\u{301}")])))
        #expect(!token.admits(HTTPRequest(method: "GET", path: "/", headers: ["Authorization": "Bearer cafe\u{301}"])))
        #expect(token.admits(HTTPRequest(method: "GET", path: "/", headers: ["Authorization": "Bearer caf\u{E9}"])))
        #expect(token.admits(HTTPRequest(method: "GET", path: "/", headers: ["Cookie": "a=b; sentry_token=caf%C3%A9"])))
    }
}
