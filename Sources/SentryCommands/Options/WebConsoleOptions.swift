import ArgumentParser
import Console
import WebServing

/// `--web` and its companions (`run`).
struct WebConsoleOptions: ParsableArguments {
    @Option(help: "Serve the web console on [HOST:]PORT (HOST 127.0.0.1 unless given; any other needs --web-token or --web-insecure), e.g. --web 8080.")
    var web: String?

    @Option(help: "A secret every console request must carry: http://HOST:PORT/?token=TOKEN or Authorization: Bearer TOKEN.")
    var webToken: String?

    @Flag(help: "Let anyone who can reach --web's address watch and aim the turret, without a token.")
    var webInsecure = false

    @Option(
        help:
            "Names besides localhost and IP addresses the console answers to, comma-separated, e.g. sentry.local (requests for any other name are refused: DNS rebinding)."
    )
    var webAllowHost: String?

    @Option(
        help:
            "Pages besides the console's own that may change settings or aim, comma-separated, e.g. http://dashboard.local:3000 (other pages are refused: cross-site requests)."
    )
    var webAllowOrigin: String?

    /// The allow lists as rules (valid once `validate` passed).
    var siteRules: SiteRules { (try? SiteRules(allowedHosts: webAllowHost, allowedOrigins: webAllowOrigin)) ?? SiteRules() }

    @Option(parsing: .unconditional, help: "At most this many video frames a second on the web console.")
    var webFps: Double = 15

    @Option(help: "At most this many connections to the console at once (a page holds two); more are answered 503.")
    var webMaxClients: Int = ConsoleServer.defaultMaximumClients

    func validate() throws {
        guard let web else {
            if webToken != nil || webInsecure || webAllowHost != nil || webAllowOrigin != nil || webMaxClients != ConsoleServer.defaultMaximumClients {
                throw ValidationError(
                    "--web-token, --web-insecure, --web-allow-host, --web-allow-origin and --web-max-clients go with --web [HOST:]PORT, e.g. --web 8080")
            }
            return
        }
        do {
            _ = try SiteRules(allowedHosts: webAllowHost, allowedOrigins: webAllowOrigin, hostFlag: "--web-allow-host", originFlag: "--web-allow-origin")
        } catch {
            throw ValidationError(error.description)
        }
        do {
            _ = try ListenAddress.checked(
                web, token: webToken, insecure: webInsecure,
                flags: .init(address: "--web", token: "--web-token", insecure: "--web-insecure", example: "--web 8080 or --web 0.0.0.0:8080"))
        } catch {
            throw ValidationError(error.description)
        }
        guard webFps.isFinite, (1...60).contains(webFps) else { throw ValidationError("--web-fps \(webFps) must be between 1 and 60") }
        guard (1...256).contains(webMaxClients) else { throw ValidationError("--web-max-clients \(webMaxClients) must be between 1 and 256") }
    }
}
