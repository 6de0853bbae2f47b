import Config
import Console
import Detectors
import Logging
import RunControl
import Synchronization

/// The settings that change while running, as the pipeline takes them.
public struct LiveSettings: Sendable {
    public var pipeline: PipelineSettings
    public var detector: DetectorOptions

    public init(pipeline: PipelineSettings, detector: DetectorOptions) {
        self.pipeline = pipeline
        self.detector = detector
    }
}

/// The live settings as control sources edit them: described (for the
/// console's page), changed by value and checked as the flags are (the
/// command line's side holds the list of them, `LiveSetting`).
public protocol LiveSettingsEditor: Sendable {
    /// What the page shows for each, in its order.
    var fields: [SettingField] { get }
    /// Each setting's value now, by long flag name.
    var values: [String: SettingValue] { get }
    /// Checks `changes` with the rest as they are; when they pass, hands the
    /// resulting settings to `applying`, and keeps them only if that succeeds.
    /// Returns the values after the change. `applying` may build a detector
    /// for a second: `values` must not wait for it (the frame loop reads them).
    func change(_ changes: [String: SettingValue], applying: (LiveSettings) -> Result<Void, ControlRefusal>) -> Result<[String: SettingValue], ControlRefusal>
}

extension LiveSettingsEditor {
    /// The values as the settings file holds them, in the page's order; an
    /// automatic choice ("") is left out, as its flag would be.
    public var fileValues: [(key: String, value: ConfigValue)] {
        let values = self.values
        return fields.compactMap { field in
            switch values[field.key] {
            case .bool(let value): (field.key, .bool(value))
            case .integer(let value): (field.key, .integer(value))
            case .number(let value): (field.key, .number(value))
            case .word(let word) where !word.isEmpty: (field.key, .string(word))
            case .word, nil: nil
            }
        }
    }
}

/// A run whose settings nothing may change (no control source asked for them).
public struct NoLiveSettings: LiveSettingsEditor {
    public init() {}
    public var fields: [SettingField] { [] }
    public var values: [String: SettingValue] { [:] }

    public func change(
        _ changes: [String: SettingValue], applying: (LiveSettings) -> Result<Void, ControlRefusal>
    ) -> Result<[String: SettingValue], ControlRefusal> {
        .failure(ControlRefusal("no setting can be changed while this run goes on"))
    }
}

/// The one place a change to the live settings becomes `RunChange`s, for
/// every control source (the console; MQTT next): checked by the editor as
/// the flags are, a new detector built off the frame loop when the detector's
/// options changed, then submitted. One change at a time.
public final class LiveSettingsControl: Sendable {
    public let editor: any LiveSettingsEditor
    private let changes: RunChanges
    private let logger: Logger
    /// The detector's options now. Held for the whole change, so changes take
    /// turns; only changes take it, never the frame loop.
    private let detector: Mutex<DetectorOptions>

    init(editor: any LiveSettingsEditor, detector: DetectorOptions, changes: RunChanges, logger: Logger) {
        self.editor = editor
        self.changes = changes
        self.logger = logger
        self.detector = Mutex(detector)
    }

    /// Applies `changes` (by long flag name) from the next frame, all or none: the values after, or why not.
    public func change(_ changes: [String: SettingValue]) -> Result<[String: SettingValue], ControlRefusal> {
        detector.withLock { current in
            editor.change(changes) { live in
                var handOff: DetectorHandOff?
                if live.detector != current {
                    do {
                        let (detector, name) = try live.detector.makeDetector(logger: logger)
                        handOff = DetectorHandOff(detector: detector, name: name)
                    } catch {
                        return .failure(ControlRefusal("\(error)"))
                    }
                    current = live.detector
                }
                self.changes.submit(.settings(live.pipeline))
                if let handOff { self.changes.submit(.detector(handOff)) }
                return .success(())
            }
        }
    }
}
