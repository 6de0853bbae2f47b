import Console
import Foundation
import Testing
import WebServing

/// The holes a browser opens into a server on loopback (issue 37), each closed at the console's routes.
@Suite("the console answers its own names and page only: DNS rebinding and cross-site requests refused")
struct SiteRulesTests {
    let hub: ConsoleHub
    let controller = RecordingController()

    init() throws { hub = try ConsoleHub(framesPerSecond: 30) }

    func routes(_ rules: SiteRules = SiteRules()) -> ConsoleRoutes {
        ConsoleRoutes(hub: hub, controller: controller, token: AccessToken(nil), rules: rules)
    }

    @Test("a foreign Host is refused on every route, the streams included, before anything else: 403 naming the flag")
    func foreignHost() async throws {
        for (method, path) in [("GET", "/"), ("GET", "/api/status"), ("GET", "/stream.mjpg"), ("GET", "/api/events"), ("POST", "/api/aim")] {
            let response = routes().respond(
                to:
                    request(method, path, headers: ["Host": "evil.example:8080"], body: method == "POST" ? #"{"action":"center"}"# : ""))
            #expect(response.status == .forbidden, "\(method) \(path)")
            #expect(bodyText(response).contains("--web-allow-host evil.example"))
        }
        #expect(controller.requests.withLock { $0 }.isEmpty)
        hub.close()
    }

    @Test("localhost, IP addresses (IPv4 and IPv6) and allowed names are answered, with or without a port")
    func ownNames() async throws {
        let rules = try SiteRules(allowedHosts: "sentry.local, Pi.Lan", allowedOrigins: nil)
        for host in ["localhost:8080", "127.0.0.1:8080", "192.168.1.20:8080", "[::1]:8080", "LOCALHOST", "sentry.local:8080", "pi.lan"] {
            #expect(routes(rules).respond(to: request("GET", "/", headers: ["Host": host])).status == .ok, "\(host)")
        }
        for host in ["sentry.local.evil.example", "127.0.0.1.nip.io:8080", "localhost.evil.example"] {
            #expect(routes(rules).respond(to: request("GET", "/", headers: ["Host": host])).status == .forbidden, "\(host)")
        }
        hub.close()
    }

    @Test("a POST from another page is refused, as text/plain and as JSON, and changes nothing; the console's own page and an allowed one pass")
    func crossSitePost() async throws {
        let rules = try SiteRules(allowedHosts: nil, allowedOrigins: "http://dashboard.local:3000")
        for (origin, type) in [
            ("http://evil.example", "text/plain"), ("http://evil.example", "application/json"), ("null", "application/json"),
            ("http://127.0.0.1:9999", "application/json"),
        ] {
            let response = routes(rules).respond(
                to:
                    request("POST", "/api/settings", headers: ["Host": "127.0.0.1:8080", "Origin": origin, "Content-Type": type], body: #"{"offset": 30}"#))
            #expect(response.status == .forbidden, "\(origin) \(type)")
        }
        #expect(controller.changes.withLock { $0 }.isEmpty)
        for origin in ["http://127.0.0.1:8080", "http://dashboard.local:3000"] {
            let response = routes(rules).respond(
                to:
                    request("POST", "/api/settings", headers: ["Host": "127.0.0.1:8080", "Origin": origin], body: #"{"offset": 30}"#))
            #expect(response.status == .ok, "\(origin)")
        }
        #expect(controller.changes.withLock { $0 }.count == 2)
        hub.close()
    }

    @Test("a POST body that is not JSON is refused with 415, Origin or not; a client without Origin sending JSON passes")
    func jsonBodies() async throws {
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
            let response = routes().respond(to: request("POST", "/api/aim", headers: ["Content-Type": type], body: #"{"action":"center"}"#))
            #expect(response.status == .unsupportedMediaType, "\(type)")
        }
        let response = routes().respond(
            to:
                request("POST", "/api/aim", headers: ["Content-Type": "application/json; charset=utf-8"], body: #"{"action":"center"}"#))
        #expect(response.status == .accepted)
        #expect(controller.requests.withLock { $0 }.count == 1)
        hub.close()
    }

}

@Suite("the allow lists for hosts and pages")
struct AllowListTests {
    @Test("allow lists must be names and scheme://host[:port]: anything else is a one-line error")
    func badAllowLists() {
        #expect(throws: ServerError.self) { try SiteRules(allowedHosts: "sentry.local:8080", allowedOrigins: nil) }
        #expect(throws: ServerError.self) { try SiteRules(allowedHosts: "http://sentry.local", allowedOrigins: nil) }
        #expect(throws: ServerError.self) { try SiteRules(allowedHosts: nil, allowedOrigins: "sentry.local") }
        #expect(throws: ServerError.self) { try SiteRules(allowedHosts: nil, allowedOrigins: "ftp://sentry.local") }
        #expect(throws: ServerError.self) { try SiteRules(allowedHosts: nil, allowedOrigins: "http://sentry.local/page") }
        #expect((try? SiteRules(allowedHosts: "a.local,b.local", allowedOrigins: "http://a.local:8080/")) != nil)
    }
}
