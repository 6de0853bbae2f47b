import Config
import Glibc
import ArgumentParser
import FoundationEssentials
import TextOutput

/// `sentry`: the root command; `run` is the default.
public struct SentryCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sentry",
        abstract: "Face-tracking sentry: aims an Arduino servo turret at the largest face a camera sees.",
        version: "\(BuildInfo.version) (\(BuildInfo.commit))",
        subcommands: [
            Run.self, Simulate.self, Bench.self, Evaluate.self, Faces.self, DevicesCommand.self, Capture.self, ShowConfig.self, Flash.self, RelayCommand.self,
            DoctorCommand.self, EventsCommand.self, FleetCommand.self, MQTTCommand.self,
        ],
        defaultSubcommand: Run.self
    )

    /// Puts the settings file's values in front of the flags, then runs as usual.
    public static func main() {
        if let script = Completions.requested(by: Array(CommandLine.arguments.dropFirst())) {
            StandardStream.writeOutput(script + "\n")
            Glibc.exit(0)
        }
        let arguments: [String]
        do {
            arguments = try SettingsFile.applied(to: Array(CommandLine.arguments.dropFirst()))
        } catch {
            StandardStream.writeError("sentry: \(error.description)\n")
            Glibc.exit(1)
        }
        // `sentry` alone, and no settings file naming a camera: what it is and how to start it, not an error.
        if CommandLine.arguments.count == 1, !arguments.contains("--camera") {
            StandardStream.writeOutput(helpMessage() + "\n\nTo start: sentry --camera FILE|/dev/video0 --serial PORT|sim (sentry run --help lists every flag).\n")
            Glibc.exit(0)
        }
        main(arguments)
    }

    public init() {}
}
