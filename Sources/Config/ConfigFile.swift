import FoundationEssentials
import Glibc
import TOMLKit
import TextOutput

/// One setting of a config file: a long flag name and its value.
public struct ConfigEntry: Sendable, Equatable {
    public var key: String
    public var value: ConfigValue
    /// Where it is in the file (1-based), for error messages.
    public var line: Int
}

/// A setting's value as TOML gave it.
public enum ConfigValue: Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    /// A list of texts, for a flag that may be given more than once (`on-expression`).
    case list([String])

    /// As it would be typed on the command line (a list: its values, comma-separated).
    public var description: String {
        switch self {
        case .bool(let value): String(value)
        case .integer(let value): String(value)
        case .number(let value): String(value)
        case .string(let value): value
        case .list(let values): values.joined(separator: ", ")
        }
    }
}

/// A config file that cannot be used, said in one line with the file, the
/// line and the key where there is one.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }

    /// `FILE:LINE: KEY: reason`.
    public init(path: String, line: Int, key: String, _ reason: String) {
        description = "config \(path):\(line): \(key): \(reason)"
    }
}

/// Which long flag names exist, and which of them are on/off switches.
public struct FlagCatalog: Sendable {
    /// Options that take a value (`offset`).
    public var options: Set<String>
    /// Switches (`tilt`; `false` in a file turns into `--no-tilt`).
    public var switches: Set<String>
    /// Options that may be given more than once, and so as a list of texts in a file.
    public var repeatable: Set<String>

    public init(options: Set<String>, switches: Set<String>, repeatable: Set<String> = []) {
        self.options = options
        self.switches = switches
        self.repeatable = repeatable
    }
}

/// sentry's settings file (SPEC §8): TOML, its keys the long flag names
/// (`offset = 40`, `tilt = true`, `camera = "/dev/video0"`), turned into
/// command-line arguments that go before the real ones, so flags win.
public struct ConfigFile: Sendable {
    public let path: String
    public let entries: [ConfigEntry]

    /// The system-wide file, read when no other is found.
    public static let systemPath = "/etc/sentry/sentry.toml"

    /// Which file to read: `--config FILE` (which must exist), else
    /// `$XDG_CONFIG_HOME/sentry/sentry.toml` (`~/.config` when unset), else
    /// `/etc/sentry/sentry.toml`; `nil` when none of the last two exists.
    public static func locate(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment, systemPath: String = systemPath
    ) -> String? {
        if let explicit { return explicit }
        return [userPath(environment: environment), systemPath].first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The user's own file: `$XDG_CONFIG_HOME/sentry/sentry.toml` (`~/.config` when unset).
    public static func userPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let home = homeDirectory(environment: environment)
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        return configHome + "/sentry/sentry.toml"
    }

    /// Reads and parses `path`.
    public init(path: String) throws(ConfigError) {
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigError("config \(path): no such file; create it (keys are the long flag names, e.g. offset = 40) or drop --config")
        }
        guard !isDirectory else { throw ConfigError("config \(path): is a directory; pass the file, e.g. \(path)/sentry.toml") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("config \(path): cannot be read (permission denied); make it readable by the user sentry runs as")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError("config \(path): not UTF-8 text; a config file is TOML, e.g. offset = 40")
        }
        try self.init(path: path, text: text)
    }

    /// Parses `text` as the contents of `path`.
    public init(path: String, text: String) throws(ConfigError) {
        self.path = path
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigError("config \(path):\(error.source.begin.line): not valid TOML (\(error.description)); write key = value, e.g. offset = 40")
        } catch {
            throw ConfigError("config \(path): not valid TOML (\(error)); write key = value, e.g. offset = 40")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var entries: [ConfigEntry] = []
        for (key, value) in table {
            let line = Self.line(of: key, in: lines)
            let converted: ConfigValue
            switch value.type {
            case .bool: converted = .bool(value.bool!)
            case .int: converted = .integer(value.int!)
            case .double: converted = .number(value.double!)
            case .string: converted = .string(value.string!)
            case .array where value.array!.allSatisfy { $0.type == .string }:
                converted = .list(value.array!.map { $0.string! })
            default:
                throw ConfigError(
                    path: path, line: line, key: key, "expected one value (true or false, a number or \"text\") or a list of \"text\", got a TOML \(value.type)"
                )
            }
            entries.append(ConfigEntry(key: key, value: converted, line: line))
        }
        self.entries = entries.sorted { $0.line < $1.line }
    }

    /// Each entry as the command-line arguments it stands for, checked
    /// against `catalog`: unknown keys and values of the wrong kind are errors.
    public func arguments(for catalog: FlagCatalog) throws(ConfigError) -> [(entry: ConfigEntry, arguments: [String])] {
        try entries.map { entry throws(ConfigError) in
            if catalog.switches.contains(entry.key) {
                guard case .bool(let on) = entry.value else {
                    throw ConfigError(path: path, line: entry.line, key: entry.key, "expected true or false, got \(entry.value)")
                }
                return (entry, [on ? "--\(entry.key)" : "--no-\(entry.key)"])
            }
            guard catalog.options.contains(entry.key) else {
                throw ConfigError(
                    path: path, line: entry.line, key: entry.key,
                    "unknown key; keys are the long flag names of `sentry run --help`, e.g. offset = 40")
            }
            if case .bool = entry.value {
                throw ConfigError(path: path, line: entry.line, key: entry.key, "expected a value, got \(entry.value)")
            }
            if case .list(let values) = entry.value {
                guard catalog.repeatable.contains(entry.key) else {
                    throw ConfigError(path: path, line: entry.line, key: entry.key, "takes one value, not a list")
                }
                return (entry, values.flatMap { ["--\(entry.key)", $0] })
            }
            return (entry, ["--\(entry.key)", entry.value.description])
        }
    }

    /// The line where `key` is set: the first `key =` or `"key" =` at the
    /// start of a line, or its table's `[key]` header.
    static func line(of key: String, in lines: [Substring]) -> Int {
        (assignment(of: key, in: lines)
            ?? lines.firstIndex { line in
                let trimmed = line.drop { $0 == " " || $0 == "\t" }
                return trimmed.hasPrefix("[\(key)]") || trimmed.hasPrefix("[[\(key)]]")
            }).map { $0 + 1 } ?? 1
    }

    /// The index of the first line that sets `key` (`key =`, `"key" =`).
    static func assignment(of key: String, in lines: [Substring]) -> Int? {
        lines.firstIndex { line in
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            return [key, "\"\(key)\"", "'\(key)'"].contains { form in
                trimmed.hasPrefix(form) && trimmed.dropFirst(form.count).drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("=")
            }
        }
    }

    /// `text` with each of `values` set: a key's line is replaced where the
    /// text sets it, else appended; every other line (comments too) stays.
    public static func updating(_ text: String, with values: [(key: String, value: ConfigValue)]) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        for (key, value) in values {
            let line = Substring("\(key) = \(value.toml)")
            if let index = assignment(of: key, in: lines) { lines[index] = line } else { lines.append(line) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Sets `values` in the file at `path`, keeping its other lines; creates
    /// the file (and its directory) when missing. The result is checked to
    /// read back before it replaces the old file, in one rename.
    public static func write(_ values: [(key: String, value: ConfigValue)], to path: String) throws(ConfigError) {
        let manager = FileManager.default
        var old = ""
        if manager.fileExists(atPath: path) {
            guard let data = manager.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw ConfigError("config \(path): cannot be read to update it; make it readable by the user sentry runs as")
            }
            old = text
        }
        let text = updating(old, with: values)
        _ = try ConfigFile(path: path, text: text)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        func refuse(_ reason: String) -> ConfigError {
            ConfigError("config \(path): cannot be written (\(reason)); give --config a file the user sentry runs as may write")
        }
        try? manager.createDirectory(atPath: directory.isEmpty ? "." : directory, withIntermediateDirectories: true)
        // The atomic write puts a new file beside the old one: the directory must be writable.
        guard access(directory.isEmpty ? "." : directory, W_OK) == 0 else { throw refuse(String(cString: strerror(errno))) }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw refuse("\(error)")
        }
    }
}

extension ConfigValue {
    /// As TOML writes it.
    var toml: String {
        switch self {
        case .bool(let value): String(value)
        case .integer(let value): String(value)
        case .number(let value): String(value)
        case .string(let value):
            "\"" + value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        case .list(let values): "[" + values.map { ConfigValue.string($0).toml }.joined(separator: ", ") + "]"
        }
    }
}
