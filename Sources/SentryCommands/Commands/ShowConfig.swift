import ArgumentParser
import Config
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
        let rows = SettingsFile.effective(merged)
        let width = (rows.map(\.key.count).max() ?? 0) + 2
        let valueWidth = min((rows.map { ($0.value ?? "-").count }.max() ?? 0) + 2, 40)
        for row in rows {
            let value = row.value ?? "-"
            print(
                row.key.padded(to: width)
                    + value.padded(to: max(valueWidth, value.count + 1)) + row.source)
        }
    }
}
