import ArgumentParser
import WebServing

/// `--web` and its companions (`run`).
struct WebConsoleOptions: ParsableArguments {
    @Option(help: "Serve the web console on [HOST:]PORT (HOST 127.0.0.1 unless given; any other needs --web-token or --web-insecure), e.g. --web 8080.")
    var web: String?

    @Option(help: "A secret every console request must carry: http://HOST:PORT/?token=TOKEN or Authorization: Bearer TOKEN.")
    var webToken: String?

    @Flag(help: "Let anyone who can reach --web's address watch and aim the turret, without a token.")
    var webInsecure = false

    @Option(parsing: .unconditional, help: "At most this many video frames a second on the web console.")
    var webFps: Double = 15

    func validate() throws {
        guard let web else {
            if webToken != nil || webInsecure { throw ValidationError("--web-token and --web-insecure go with --web [HOST:]PORT, e.g. --web 8080") }
            return
        }
        do {
            _ = try ListenAddress.checked(
                web, token: webToken, insecure: webInsecure,
                flags: .init(address: "--web", token: "--web-token", insecure: "--web-insecure", example: "--web 8080 or --web 0.0.0.0:8080"))
        } catch {
            throw ValidationError(error.description)
        }
        guard webFps.isFinite, (1...60).contains(webFps) else { throw ValidationError("--web-fps \(webFps) must be between 1 and 60") }
    }
}
