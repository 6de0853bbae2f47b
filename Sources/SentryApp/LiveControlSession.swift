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

    init(settings: LiveSettingsControl, changes: RunChanges, configPath: String?, keysGivenAsFlags: Set<String>) {
        settingsControl = settings
        self.changes = changes
        self.configPath = configPath
        self.keysGivenAsFlags = keysGivenAsFlags
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
            return .failure(ControlRefusal(error.description))
        }
        let overridden = keysGivenAsFlags.intersection(values.map(\.key)).sorted()
        let note = overridden.isEmpty ? "" : "; \(overridden.map { "--\($0)" }.joined(separator: ", ")) also given as flags, which win at the next start"
        return .success("saved to \(configPath)\(note)")
    }

    func steer(_ request: SteeringRequest) { changes.submit(.steer(request)) }
}
