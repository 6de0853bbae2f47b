import ArgumentParser
import Relay
import WebServing

/// Where a server listens and who may use it (`relay`).
struct ListenOptions: ParsableArguments {
    @Option(help: "[HOST:]PORT to listen on; HOST an IPv4 address (0.0.0.0 for every interface).")
    var listen: String = "127.0.0.1:\(RelayServer.defaultPort)"

    @Option(help: "A secret every connection must carry: ws://HOST:PORT/?token=TOKEN or Authorization: Bearer TOKEN.")
    var token: String?

    @Flag(help: "Allow anyone on the network to aim the turret without a token.")
    var insecure = false

    @Option(help: "Names besides localhost and IP addresses the relay answers to, comma-separated, e.g. sentry.local (DNS rebinding).")
    var allowHost: String?

    @Option(help: "Web pages that may open the relay's WebSocket, comma-separated, e.g. http://app.local:8000 (other pages are refused).")
    var allowOrigin: String?

    @Option(help: "At most this many connections at once (one controller, the others turned away with a reason); more are answered 503.")
    var maxClients: Int = RelayServer.defaultMaximumClients

    /// The allow lists as rules (valid once `validate` passed).
    var siteRules: SiteRules { (try? SiteRules(allowedHosts: allowHost, allowedOrigins: allowOrigin)) ?? SiteRules() }

    /// `listen` as an address.
    var address: ListenAddress? { ListenAddress(parsing: listen) }

    func validate() throws {
        do {
            _ = try ListenAddress.checked(
                listen, token: token, insecure: insecure,
                flags: .init(address: "--listen", token: "--token", insecure: "--insecure", example: "127.0.0.1:12354"))
        } catch {
            throw ValidationError(error.description)
        }
        do {
            _ = try SiteRules(allowedHosts: allowHost, allowedOrigins: allowOrigin, hostFlag: "--allow-host", originFlag: "--allow-origin")
        } catch {
            throw ValidationError(error.description)
        }
        guard (1...256).contains(maxClients) else { throw ValidationError("--max-clients \(maxClients) must be between 1 and 256") }
    }
}
