import Config
import RunControl
import Tracking

/// The run's one `ControlSession`, which every control source (the console,
/// MQTT) is handed: settings checked and changed through `LiveSettingsControl`,
/// steering submitted as a `RunChange`, Save written to the settings file.
/// A source only turns its transport's requests into these calls and their
/// refusals into its own answers.
final class LiveControlSession: ControlSession {
    private let settingsControl: LiveSettingsControl
    private let changes: RunChanges
    /// The file Save writes (the one `--config` reads), and the keys given as flags too.
    private let configPath: String?
    private let keysGivenAsFlags: Set<String>
    /// The service's own folder, where Save writes when the settings file is root's.
    private let stateDirectory: String?

    init(settings: LiveSettingsControl, changes: RunChanges, configPath: String?, keysGivenAsFlags: Set<String>, stateDirectory: String? = nil) {
        settingsControl = settings
        self.changes = changes
        self.configPath = configPath
        self.keysGivenAsFlags = keysGivenAsFlags
        self.stateDirectory = stateDirectory
    }

    var settings: [String: SettingValue] { settingsControl.editor.values }

    var fields: [SettingField] { settingsControl.editor.fields }

    func change(_ changes: [String: SettingValue]) -> Result<[String: SettingValue], ControlRefusal> { settingsControl.change(changes) }

    func save() -> Result<String, ControlRefusal> {
        guard let configPath else { return .failure(ControlRefusal("this run has no settings file to save to; start it with --web")) }
        let values = settingsControl.editor.fileValues
        do {
            try ConfigFile.write(values, to: configPath)
        } catch {
            // The service's file is root's (ProtectSystem=strict keeps it read-only even to a
            // root service): the values go to the service's own folder, and the answer says how to keep them.
            guard let stateDirectory else { return .failure(ControlRefusal(error.description)) }
            let beside = stateDirectory + "/" + Self.savedSettingsName
            guard (try? ConfigFile.write(values, to: beside)) != nil else { return .failure(ControlRefusal(error.description)) }
            return .success(
                "\(configPath) is root's and cannot be written by the service; saved to \(beside) instead: to keep them at the next start, copy its lines into \(configPath) (sudoedit \(configPath))"
            )
        }
        let overridden = keysGivenAsFlags.intersection(values.map(\.key)).sorted()
        let note = overridden.isEmpty ? "" : "; \(overridden.map { "--\($0)" }.joined(separator: ", ")) also given as flags, which win at the next start"
        return .success("saved to \(configPath)\(note)")
    }

    /// The file Save writes in the service's folder when the settings file cannot be written.
    static let savedSettingsName = "console-settings.toml"

    func steer(_ request: SteeringRequest) { changes.submit(.steer(request)) }
}
