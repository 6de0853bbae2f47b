import ArgumentParser
import Config
import FoundationEssentials
import Glibc
import Synchronization
import TextOutput

/// The settings file in front of the command line: its entries become
/// arguments placed before the user's, so a flag always wins over the file
/// (the last value of an option is the one kept). Applies to `run` (the
/// default command) and `config`.
enum SettingsFile {
    /// Where each argument of a merged command line came from.
    enum Source: Equatable {
        case flag
        case file(line: Int)
    }

    /// The switches a settings file may not turn on (SPEC §8's safety: a
    /// shot only from a process started with `--fire`): a file read at
    /// every boot would arm the service silently.
    static let commandLineOnly: Set = ["--fire", "--pan-only-below-heads"]

    /// A command line with the file's arguments in it.
    struct Merged {
        var arguments: [String]
        var sources: [Source]
        var file: ConfigFile?
        /// What was left out of the file and why, one line each, for stderr.
        var notes: [String] = []
    }

    /// The long names `run` takes, from its own definition.
    static let catalog: (options: [String], switches: [String], defaults: [String: String], repeatable: Set<String>) = {
        struct Dump: Decodable {
            struct Command: Decodable { var arguments: [Argument] }
            struct Argument: Decodable {
                struct Name: Decodable { var kind: String; var name: String }
                var kind: String
                var names: [Name]?
                var preferredName: Name?
                var defaultValue: String?
                var isRepeating: Bool?
            }
            var command: Command
        }
        let ignored: Set = ["help", "version", "config", "experimental-dump-help"]
        guard let dump = try? JSONDecoder().decode(Dump.self, from: Data(Run._dumpHelp().utf8)) else { return ([], [], [:], []) }
        var options: [String] = [], switches: [String] = [], defaults: [String: String] = [:], repeatable: Set<String> = []
        for argument in dump.command.arguments {
            guard let name = argument.preferredName, name.kind == "long", !ignored.contains(name.name) else { continue }
            // `--no-tilt` is how a file's `tilt = false` is said, not a key of its own.
            if name.name.hasPrefix("no-"), switches.contains(String(name.name.dropFirst(3))) { continue }
            if argument.kind == "option" { options.append(name.name) } else if argument.kind == "flag" { switches.append(name.name) }
            defaults[name.name] = argument.kind == "flag" ? "false" : argument.defaultValue
            if argument.kind == "option", argument.isRepeating == true { repeatable.insert(name.name) }
        }
        return (options, switches, defaults, repeatable)
    }()

    static var flagCatalog: FlagCatalog {
        FlagCatalog(options: Set(catalog.options), switches: Set(catalog.switches), repeatable: catalog.repeatable)
    }

    /// The subcommands the file does not apply to: every one but `run` and
    /// `config` (from `sentry`'s own list, so a new command needs no line
    /// here), and the words that ask for help or the version.
    static let otherCommands: Set<String> = Set(
        SentryCommand.configuration.subcommands.map { $0._commandName }.filter { $0 != Run._commandName && $0 != "config" }
    ).union(["help", "-h", "--help", "--version", "--experimental-dump-help", "--generate-completion-script"])

    /// `arguments` (without the program name) with the file's settings
    /// inserted for `run`; unchanged for other commands and for `config`,
    /// which merges by itself to say where each value came from.
    static func applied(to arguments: [String]) throws(ConfigError) -> [String] {
        let first = arguments.first ?? ""
        if otherCommands.contains(first) || first == "config" { return arguments }
        let commandWord = first == "run" ? 1 : 0
        let merged = try merge(Array(arguments[commandWord...]))
        for note in merged.notes { StandardStream.writeError("sentry: \(note)\n") }
        return Array(arguments[..<commandWord]) + merged.arguments
    }

    /// The file `--config` names (or the default one) merged in front of
    /// `flags`, every entry checked: a bad key or value names its line.
    static func merge(
        _ flags: [String], environment: [String: String] = ProcessInfo.processInfo.environment, systemPath: String = ConfigFile.systemPath
    ) throws(ConfigError) -> Merged {
        let explicit = configArgument(in: flags)
        if let explicit, explicit.isEmpty { throw ConfigError("--config needs a file path, e.g. --config /etc/sentry/sentry.toml") }
        guard let path = ConfigFile.locate(explicit: explicit, environment: environment, systemPath: systemPath) else {
            return Merged(arguments: flags, sources: flags.map { _ in .flag }, file: nil)
        }
        let file = try ConfigFile(path: path)
        var converted = try file.arguments(for: flagCatalog)
        var notes: [String] = []
        // The system file is the service's (its unit names it with --config): a folder there that
        // only the service's user may write must not end the run of a user who merely fell back on it.
        if explicit == nil, path == systemPath, !flags.contains(where: { $0 == "--events" || $0.hasPrefix("--events=") }),
            let entry = converted.first(where: { $0.entry.key == "events" })?.entry, case .string(let folder) = entry.value, !isWritableFolder(folder)
        {
            converted.removeAll { $0.entry.key == "events" }
            notes.append(
                "events = \"\(folder)\" in \(path) is the service's folder, which this user cannot write: this run keeps no events (pass --events DIR to keep them)")
        }
        for (entry, entryArguments) in converted {
            if let arming = entryArguments.first(where: commandLineOnly.contains) {
                throw ConfigError(
                    path: file.path, line: entry.line, key: entry.key,
                    "\(arming) arms the turret, and arming is a command-line act: remove this line and pass \(arming) when you start sentry (the service: systemctl edit sentry, docs/guide/safety.md)"
                )
            }
        }
        var arguments: [String] = [], sources: [Source] = []
        for (entry, entryArguments) in converted {
            arguments += entryArguments
            sources += entryArguments.map { _ in .file(line: entry.line) }
        }
        let merged = Merged(arguments: arguments + flags, sources: sources + flags.map { _ in .flag }, file: file, notes: notes)
        try check(merged, converted)
        return merged
    }

    /// Whether this user may keep events in `folder`: it is a writable folder, or it is missing and its nearest existing parent is one.
    static func isWritableFolder(_ folder: String) -> Bool {
        var path = folder
        while access(path, F_OK) != 0 {
            guard let slash = path.lastIndex(of: "/") else {
                path = "."
                break
            }
            path = slash == path.startIndex ? "/" : String(path[..<slash])
        }
        var isFolder = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder && access(path, W_OK | X_OK) == 0
    }

    /// Parses the merged settings as `run` would; when they fail because of
    /// one of the file's entries, says so with its line, rather than blaming
    /// a flag the user never typed. Errors of the flags themselves are left
    /// to the command's own parsing.
    static func check(_ merged: Merged, _ converted: [(entry: ConfigEntry, arguments: [String])]) throws(ConfigError) {
        guard let file = merged.file, let reason = failure(parsing: merged.arguments) else { return }
        for (entry, arguments) in converted where failure(parsing: arguments) == reason {
            throw ConfigError(path: file.path, line: entry.line, key: entry.key, reason)
        }
    }

    /// Why `run` would refuse `arguments` (with a camera and a serial port
    /// supplied when they lack them), or `nil`.
    static func failure(parsing arguments: [String]) -> String? {
        do {
            _ = try Run.parse(withPlaceholders(arguments))
            return nil
        } catch {
            return Run.message(for: error)
        }
    }

    /// The run `arguments` make (a camera and a serial port supplied when they lack them), or nil when it refuses them.
    static func parsedRun(_ arguments: [String]) -> Run? { try? Run.parse(withPlaceholders(arguments)) }

    private static func withPlaceholders(_ arguments: [String]) -> [String] {
        (arguments.contains("--camera") ? [] : ["--camera", "file"]) + (arguments.contains("--serial") ? [] : ["--serial", "sim"]) + arguments
    }

    /// The value of `--config` among `flags`, if given.
    static func configArgument(in flags: [String]) -> String? {
        for (index, flag) in flags.enumerated() {
            if flag == "--config" { return index + 1 < flags.count ? flags[index + 1] : "" }
            if flag.hasPrefix("--config=") { return String(flag.dropFirst("--config=".count)) }
        }
        return nil
    }

    /// Every setting's effective value and where it came from, in `run`'s order.
    static func effective(_ merged: Merged) -> [(key: String, value: String?, source: String)] {
        var found: [String: (value: String, source: Source)] = [:]
        var index = 0
        let arguments = merged.arguments
        while index < arguments.count {
            let argument = arguments[index]
            defer { index += 1 }
            guard argument.hasPrefix("--") else { continue }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if catalog.switches.contains(name) {
                found[name] = ("true", merged.sources[index])
            } else if name.hasPrefix("no-"), catalog.switches.contains(String(name.dropFirst(3))) {
                found[String(name.dropFirst(3))] = ("false", merged.sources[index])
            } else if catalog.options.contains(name) {
                guard let value = inline ?? (index + 1 < arguments.count ? arguments[index + 1] : nil) else { continue }
                if inline == nil { index += 1 }
                // A repeatable option's values add up (a rule from the file, another as a flag); others: the last wins.
                if catalog.repeatable.contains(name), let earlier = found[name] {
                    found[name] = (earlier.value + ", " + value, merged.sources[index])
                } else {
                    found[name] = (value, merged.sources[index])
                }
            }
        }
        return (catalog.options + catalog.switches).map { key in
            guard let (value, source) = found[key] else { return (key, catalog.defaults[key], "default") }
            switch source {
            case .flag: return (key, value, "flag")
            case .file(let line): return (key, value, "\(merged.file?.path ?? "file"):\(line)")
            }
        }
    }

    /// The value the settings file gives `key`, for a subcommand the file does not apply to (`sentry events`' folder, `sentry fleet`'s broker):
    /// the file sentry reads, or `config`.
    static func configuredValue(_ key: String, config: String? = nil) -> String? {
        guard let merged = try? merge(config.map { ["--config", $0] } ?? []) else { return nil }
        return effective(merged).first { $0.key == key }?.value
    }
}
