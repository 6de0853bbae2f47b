import ArgumentParser
import Config
import Console
import FoundationEssentials
import SentryApp
import WebServing

/// The web console's live settings: which flags can change while sentry
/// runs, and how a set of their values is read (by `run`'s own parser, so
/// the checks and messages are the flags').
extension Run {
    /// The flags the console may change. `--fire` itself is not among them:
    /// arming the trigger stays a decision made where sentry is started.
    static let liveKeys = [
        "offset", "invert-x", "invert-y", "tilt", "deadband", "lost-after", "min-score", "detector", "detect-fps",
        "smooth", "smooth-cutoff", "smooth-beta", "hysteresis", "switch-margin", "switch-frames", "search", "lock-after",
        "fire-tolerance", "fire-cooldown", "mount", "fov", "kp", "ki", "kd", "expressions", "expressions-fps", "spare",
    ]

    /// `--web`'s options, or `nil` without it. `commandLine`: the arguments
    /// run was parsed from (the settings file merged in), on top of which
    /// the console's changes are parsed.
    func webOptions(commandLine: [String]) -> WebOptions? {
        guard let web = webConsole.web, let address = ListenAddress(parsing: web) else { return nil }
        var base = commandLine
        if base.first == "run" { base.removeFirst() }
        let effective = SettingsFile.effective(SettingsFile.Merged(arguments: base, sources: base.map { _ in .flag }, file: nil))
        var values: [String: String] = [:]
        for (key, value, _) in effective where Self.liveKeys.contains(key) { values[key] = value ?? "" }
        let switches = Set(SettingsFile.catalog.switches)
        let frozenBase = base
        var options = WebOptions(
            address: address, token: webConsole.webToken, values: values, switches: switches,
            configPath: ConfigFile.locate(explicit: config) ?? ConfigFile.userPath()
        ) { values in
            Self.liveSettings(base: frozenBase, values: values, switches: switches)
        }
        options.framesPerSecond = webConsole.webFps
        options.rules = webConsole.siteRules
        options.maximumClients = webConsole.webMaxClients
        options.keysGivenAsFlags = Set(
            Self.liveKeys.filter { key in
                CommandLine.arguments.contains { $0 == "--\(key)" || $0.hasPrefix("--\(key)=") || $0 == "--no-\(key)" }
            })
        return options
    }

    /// `base` with `values` after it (the last value of a flag wins), read as `run` reads its command line.
    static func liveSettings(base: [String], values: [String: String], switches: Set<String>) -> Result<LiveSettings, ConsoleRefusal> {
        var arguments = base
        for (key, value) in values.sorted(by: { $0.key < $1.key }) where !value.isEmpty {
            if switches.contains(key) {
                guard value == "true" || value == "false" else { return .failure(ConsoleRefusal("--\(key) is on or off: send true or false")) }
                arguments.append(value == "true" ? "--\(key)" : "--no-\(key)")
            } else {
                arguments += ["--\(key)", value]
            }
        }
        do {
            let run = try Run.parse(arguments)
            return .success(LiveSettings(pipeline: run.pipelineSettings, detector: run.detectorOptions))
        } catch {
            return .failure(ConsoleRefusal(Run.message(for: error)))
        }
    }
}
