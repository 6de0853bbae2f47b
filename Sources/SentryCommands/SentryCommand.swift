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
            Run.self, Simulate.self, Bench.self, Evaluate.self, Faces.self, DevicesCommand.self, Known.self, Capture.self, ShowConfig.self, Flash.self, RelayCommand.self,
            DoctorCommand.self, EventsCommand.self, FleetCommand.self, MQTTCommand.self, RangeCommand.self,
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
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            exitInOneLine(error, arguments: arguments)
        }
    }

    /// A bad flag or value is one line that names it and where the flags are
    /// listed (swift-argument-parser's own message adds the usage and a hint,
    /// three lines); help, the version and errors of a run are its as usual.
    static func exitInOneLine(_ error: any Error, arguments: [String]) -> Never {
        let code = exitCode(for: error)
        guard code == .validationFailure else { exit(withError: error) }
        let said = message(for: error).split(separator: "\n").map { $0.drop { $0 == " " } }.joined(separator: " ")
        let command = configuration.subcommands.map { $0._commandName }.first { $0 == arguments.first } ?? Run._commandName
        StandardStream.writeError("Error: \(said) (sentry \(command) --help lists every flag)\n")
        Glibc.exit(code.rawValue)
    }

    public init() {}
}
