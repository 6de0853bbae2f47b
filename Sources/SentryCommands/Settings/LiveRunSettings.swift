import ArgumentParser
import Config
import Console
import Detectors
import FoundationEssentials
import RunControl
import SentryApp
import Synchronization
import TextOutput
import Tracking
import WebServing

/// A live setting tied to the field of `run` that holds it: read as the
/// typed value control sources see, and set from a value parsed as its flag
/// parses it (so a change is refused exactly as the flag would be).
struct LiveBinding: Sendable {
    let setting: LiveSetting
    let read: @Sendable (Run) -> SettingValue
    /// Sets the field from `value`; false when `value` is no value of its type.
    let assign: @Sendable (inout Run, SettingValue) -> Bool

    /// `shown`: the value as control sources see it.
    init<Value: ExpressibleByArgument & Sendable>(
        _ setting: LiveSetting, _ field: WritableKeyPath<Run, Value> & Sendable, shown: @escaping @Sendable (Value) -> SettingValue
    ) {
        self.setting = setting
        read = { run in shown(run[keyPath: field]) }
        assign = { run, value in
            guard let parsed = Value(argument: value.argument) else { return false }
            run[keyPath: field] = parsed
            return true
        }
    }

    init<Value: ExpressibleByArgument & LiveValue & Sendable>(_ setting: LiveSetting, _ field: WritableKeyPath<Run, Value> & Sendable) {
        self.init(setting, field, shown: \.settingValue)
    }

    /// A flag that may be left out: `absent` ("" or a word the choices give, such as `none`) leaves it out.
    init<Value: ExpressibleByArgument & Sendable>(
        _ setting: LiveSetting, _ field: WritableKeyPath<Run, Value?> & Sendable, absent: String, shown: @escaping @Sendable (Value) -> SettingValue
    ) {
        self.setting = setting
        read = { run in run[keyPath: field].map(shown) ?? .word(absent) }
        assign = { run, value in
            let text = value.argument
            if text.isEmpty || text == absent {
                run[keyPath: field] = nil
                return true
            }
            guard let parsed = Value(argument: text) else { return false }
            run[keyPath: field] = parsed
            return true
        }
    }
}

/// A flag's value type as control sources see it.
protocol LiveValue {
    var settingValue: SettingValue { get }
}

extension Bool: LiveValue {
    var settingValue: SettingValue { .bool(self) }
}

extension Int: LiveValue {
    var settingValue: SettingValue { .integer(self) }
}

extension Double: LiveValue {
    var settingValue: SettingValue { .number(self) }
}

extension Float: LiveValue {
    /// The number as written (0.3, not 0.30000001192…), as the flag took it.
    var settingValue: SettingValue { .number(Double("\(self)") ?? Double(self)) }
}

extension DetectRate: LiveValue {
    var settingValue: SettingValue { perSecond.map(SettingValue.number) ?? .word("every") }
}

extension Run {
    /// The settings the console may change, in the order it shows them.
    static let live: [LiveBinding] = [
        LiveBinding(.offset, \.trackingOptions.offset),
        LiveBinding(.invertX, \.trackingOptions.invertX),
        LiveBinding(.invertY, \.trackingOptions.invertY),
        LiveBinding(.trimX, \.trackingOptions.trimX),
        LiveBinding(.trimY, \.trackingOptions.trimY),
        LiveBinding(.tilt, \.trackingOptions.tilt),
        LiveBinding(.deadband, \.trackingOptions.deadband),
        LiveBinding(.hysteresis, \.trackingOptions.hysteresis),
        LiveBinding(.lostAfter, \.trackingOptions.lostAfter),
        LiveBinding(.search, \.trackingOptions.search) { .word($0.rawValue) },
        LiveBinding(.switchMargin, \.trackingOptions.switchMargin),
        LiveBinding(.switchFrames, \.trackingOptions.switchFrames),
        LiveBinding(.smooth, \.trackingOptions.smooth),
        LiveBinding(.smoothCutoff, \.trackingOptions.smoothCutoff),
        LiveBinding(.smoothBeta, \.trackingOptions.smoothBeta),
        LiveBinding(.lockAfter, \.lockFire.lockAfter),
        LiveBinding(.fireTolerance, \.lockFire.fireTolerance),
        LiveBinding(.fireCooldown, \.lockFire.fireCooldown),
        LiveBinding(.detector, \.detection.detector, absent: "") { .word($0.rawValue) },
        LiveBinding(.minScore, \.detection.minScore),
        LiveBinding(.detectFps, \.detection.detectFps),
        LiveBinding(.expressions, \.faces.expressions),
        LiveBinding(.expressionsFps, \.faces.expressionsFps),
        LiveBinding(.spare, \.faces.spare, absent: "none") { .word($0) },
        LiveBinding(.mount, \.trackingOptions.mount) { .word($0.rawValue) },
        LiveBinding(.fov, \.trackingOptions.fov, absent: "") { .number($0) },
        LiveBinding(.kp, \.trackingOptions.kp),
        LiveBinding(.ki, \.trackingOptions.ki),
        LiveBinding(.kd, \.trackingOptions.kd),
    ]

    /// Every check a live setting's flag is under, with the rest of the run as it is.
    func validateLive() throws {
        try trackingOptions.validate()
        try lockFire.validate()
        try detection.validate()
        try faces.validate()
        try validate()
    }

    /// `--web`'s options, or `nil` without it.
    var webOptions: WebOptions? {
        guard let web = webConsole.web, let address = ListenAddress(parsing: web) else { return nil }
        var options = WebOptions(address: address, token: webConsole.webToken, configPath: ConfigFile.locate(explicit: config) ?? ConfigFile.userPath())
        options.framesPerSecond = webConsole.webFps
        options.rules = webConsole.siteRules
        options.maximumClients = webConsole.webMaxClients
        // systemd lists the unit's state folders, colon-separated; the service has one.
        options.stateDirectory = ProcessInfo.processInfo.environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
        options.keysGivenAsFlags = Set(
            Self.live.map(\.setting.key).filter { key in
                CommandLine.arguments.contains { $0 == "--\(key)" || $0.hasPrefix("--\(key)=") || $0 == "--no-\(key)" }
            })
        return options
    }
}

/// The live settings held as `run`'s own typed values: a change sets one
/// field from one value and is checked as the flags are, all or nothing.
///
/// Changes take turns (`changing`), and `run` is locked only to copy it and
/// to keep a change: a change's `applying` may build a detector for a
/// second, and readers (the frame loop, once a second with `--mqtt`) must
/// never wait for that.
final class LiveRunSettings: LiveSettingsEditor {
    private let run: Mutex<Run>
    private let changing = Mutex(())
    /// The people `--known` enrols: `--spare` may name them too.
    private let household: [String]

    init(_ run: Run, household: [String] = []) {
        self.run = Mutex(run)
        self.household = household
    }

    var fields: [SettingField] {
        Run.live.map { binding in
            var field = binding.setting.field
            if binding.setting.key == LiveSetting.spare.key { field.choices? += household }
            return field
        }
    }

    var values: [String: SettingValue] { Self.values(of: run.withLock { $0 }) }

    /// Each live setting's value in `run`, by key.
    private static func values(of run: Run) -> [String: SettingValue] {
        Dictionary(uniqueKeysWithValues: Run.live.map { ($0.setting.key, $0.read(run)) })
    }

    func change(
        _ changes: [String: SettingValue], applying: (LiveSettings) -> Result<Void, ControlRefusal>
    ) -> Result<[String: SettingValue], ControlRefusal> {
        changing.withLock { _ in
            // Only changes write `run`, and they take turns: the copy stays current until kept.
            var changed = run.withLock { $0 }
            for (key, value) in changes.sorted(by: { $0.key < $1.key }) {
                guard let binding = Run.live.first(where: { $0.setting.key == key }) else {
                    return .failure(ControlRefusal("'\(key)' cannot be changed while running"))
                }
                guard binding.assign(&changed, value) else { return .failure(ControlRefusal(binding.setting.notAValue(value.argument))) }
            }
            do {
                try changed.validateLive()
            } catch {
                return .failure(ControlRefusal(Run.message(for: error)))
            }
            if let known = changed.faces.known, let refusal = Run.refusal(of: changed.faces.sparedPeople, household: household, in: known) {
                return .failure(ControlRefusal(refusal))
            }
            if case .failure(let refusal) = applying(LiveSettings(pipeline: changed.pipelineSettings, detector: changed.detectorOptions)) {
                return .failure(refusal)
            }
            run.withLock { $0 = changed }
            return .success(Self.values(of: changed))
        }
    }
}

extension LiveSetting {
    /// Why `text` is not a value of this setting, in one line.
    func notAValue(_ text: String) -> String {
        let between: (ClosedRange<Double>) -> String = { "\(String(printf: "%g", $0.lowerBound)) to \(String(printf: "%g", $0.upperBound))" }
        return switch kind {
        case .onOff: "--\(key) is on or off: send true or false"
        case .number(let range, whole: true): "--\(key) takes a whole number from \(between(range)), not '\(text)'"
        case .number(let range, _): "--\(key) takes a number from \(between(range)), not '\(text)'"
        case .rate(let range): "--\(key) takes a number from \(between(range)) or 'every', not '\(text)'"
        case .choice(let words): "--\(key) takes one of \(words.filter { !$0.isEmpty }.joined(separator: ", ")), not '\(text)'"
        }
    }
}
