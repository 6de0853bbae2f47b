import ArgumentParser
import Config
import Detectors
import FoundationEssentials
import TextOutput

/// `sentry config`: the settings a run would use, and where each came from.
struct ShowConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the effective settings and where each comes from: default, the config file (and line), or a flag.",
        discussion:
            "Takes the same flags as the run command. The file is --config FILE, else $XDG_CONFIG_HOME/sentry/sentry.toml (~/.config/sentry/sentry.toml), else /etc/sentry/sentry.toml; its keys are the long flag names."
    )

    @Argument(parsing: .captureForPassthrough, help: "Flags as for the run command, e.g. --config FILE --offset 30.")
    var flags: [String] = []

    func run() throws {
        let merged = try failingCleanly { try SettingsFile.merge(flags) }
        // The whole set must parse as a run would (camera and serial may be missing here).
        if let failure = SettingsFile.failure(parsing: merged.arguments) {
            StandardStream.writeError("sentry: \(failure)\n")
            throw ExitCode.validationFailure
        }
        print("config file: \(merged.file?.path ?? "none (--config FILE, ~/.config/sentry/sentry.toml or \(ConfigFile.systemPath))")")
        let rows = SettingsFile.effective(merged).map { row in Self.asRun(row, SettingsFile.parsedRun(merged.arguments)) }
        let width = (rows.map(\.key.count).max() ?? 0) + 2
        let valueWidth = min((rows.map { ($0.value ?? "-").count }.max() ?? 0) + 2, 40)
        for row in rows {
            let value = row.value ?? "-"
            print(
                row.key.padded(to: width)
                    + value.padded(to: max(valueWidth, value.count + 1)) + row.source)
        }
    }

    /// A row as the run takes it: a value another flag implies (`--spare` turns the
    /// expressions on), or the one a run picks when the flag is left out (the detector).
    static func asRun(_ row: (key: String, value: String?, source: String), _ run: Run?) -> (key: String, value: String?, source: String) {
        guard let run else { return row }
        switch row.key {
        case "expressions" where row.value == "false" && run.faces.enabled:
            return (row.key, "true", "turned on by \(run.faces.reason)")
        case "detector" where row.value == nil:
            let kind = run.detectorOptions.automaticKind
            return (row.key, kind.rawValue, kind == .blazeface ? "default (its model is installed)" : "default (no BlazeFace model, or no AVX2)")
        default:
            return row
        }
    }
}
