import Tracking

/// What a person may ask of the running sentry, through any control source:
/// the console and MQTT adapt it to their transport (an HTTP answer, a
/// message on `…/error`), a later source does the same. The answers come at
/// once (validated, or refused with the flag's own message, typed as
/// `ControlRefusal`); the frame loop applies them before its next frame.
public protocol ControlSession: Sendable {
    /// The settings that can change while running, by long flag name.
    var settings: [String: SettingValue] { get }
    /// How the page shows each of them, in its order.
    var fields: [SettingField] { get }
    /// Validates `changes` with the rest as they are, exactly as the flags
    /// are; on success they take effect from the next frame. Returns the
    /// settings after the change.
    func change(_ changes: [String: SettingValue]) -> Result<[String: SettingValue], ControlRefusal>
    /// Writes the settings to the config file; says where (and what a flag overrides).
    func save() -> Result<String, ControlRefusal>
    /// Hands the turret to a person, or back to face tracking.
    func steer(_ request: SteeringRequest)
}

/// One live setting as the page shows it: its field, grouped and labelled,
/// with what it takes. Sent once (`GET /api/settings`); the values come
/// with it and after each change.
public struct SettingField: Codable, Sendable, Equatable {
    /// The long flag's name: the key of `POST /api/settings` and of the settings file.
    public var key: String
    /// The heading it is shown under.
    public var group: String
    public var label: String
    /// After the number ("°", "s"); "" for none.
    public var unit: String
    /// The flag's help, shown when the label is pointed at.
    public var help: String
    /// `number`, `integer`, `rate` (a number or `every`), `switch` or `choice`.
    public var kind = "number"
    public var minimum: Double?
    public var maximum: Double?
    /// A choice's words; "" is "automatic" (the flag left out).
    public var choices: [String]?
    /// A tuning knob, folded under "advanced" on the page.
    public var advanced = false

    public init(key: String, group: String, label: String, unit: String, help: String) {
        self.key = key
        self.group = group
        self.label = label
        self.unit = unit
        self.help = help
    }
}
