import ArgumentParser
import Console
import RunControl
import Detectors
import Expressions
import FoundationEssentials
import Geometry
import SentryApp
import TextOutput
import Tracking
import TurretProtocol

/// One setting the web console may change while sentry runs: a `run` flag
/// with what the console shows of it (group, label, unit) and the range its
/// values must keep. This list is the one place a live setting is named:
/// the flag's help (so `sentry --help` and the man page), its range check,
/// the console's field, the value Save writes to the settings file and the
/// change the console submits all come from its entry. `--fire` is not
/// among them: arming the trigger stays a decision made where sentry is started.
struct LiveSetting: Sendable {
    /// Where the console shows a setting, most used first.
    enum Group: String, CaseIterable, Sendable {
        case aim = "Aim"
        case target = "Target"
        case smoothing = "Smoothing"
        case lockFire = "Lock and fire"
        case detection = "Detection"
        case expressions = "Expressions"
        case turretCamera = "Camera and mount"
    }

    /// The values a setting takes.
    enum Kind: Sendable {
        /// A number in a range; `whole`: an integer.
        case number(ClosedRange<Double>, whole: Bool = false)
        /// A number of times a second in a range, or `every` (each frame).
        case rate(ClosedRange<Double>)
        case onOff
        /// One of these words; "" where the flag may be left out.
        case choice([String])
    }

    /// The long flag's name, which is also the settings file's key.
    let key: String
    let group: Group
    /// A few words the console shows beside the field.
    let label: String
    /// The unit after the number, as the console shows it ("°", "s", "Hz").
    let unit: String
    let kind: Kind
    /// The flag's help, without the note that the console can change it.
    let help: String
    /// Said after the range when a value is refused (its unit in words, a hint).
    let rangeNote: String
    /// A tuning knob most users never touch: the console folds it under "advanced".
    private(set) var isTuning = false

    init(_ key: String, _ group: Group, _ label: String, unit: String = "", _ kind: Kind, rangeNote: String = "", help: String) {
        self.key = key
        self.group = group
        self.label = label
        self.unit = unit
        self.kind = kind
        self.help = help
        self.rangeNote = rangeNote
    }

    /// This setting, folded under "advanced" in the console.
    func tuning() -> LiveSetting {
        var setting = self
        setting.isTuning = true
        return setting
    }

    /// The flag's help: the entry's, and that the console can change it.
    var flagHelp: ArgumentHelp { ArgumentHelp("\(help) Live: the web console can change it.") }

    /// Refuses `value` outside the entry's range, naming the flag and its unit.
    func check(_ value: Double) throws(ValidationError) {
        let range: ClosedRange<Double>
        switch kind {
        case .number(let numbers, _), .rate(let numbers): range = numbers
        case .onOff, .choice: return
        }
        let every = if case .rate = kind { ", or 'every'" } else { "" }
        try checkRange(value, key, range, rangeNote + every)
    }

    func check(_ value: Int) throws(ValidationError) { try check(Double(value)) }

    /// The field the console's page builds for it.
    var field: SettingField {
        var field = SettingField(key: key, group: group.rawValue, label: label, unit: unit, help: help)
        field.advanced = isTuning
        switch kind {
        case .number(let range, let whole):
            field.kind = whole ? "integer" : "number"
            (field.minimum, field.maximum) = (range.lowerBound, range.upperBound)
        case .rate(let range):
            field.kind = "rate"
            (field.minimum, field.maximum) = (range.lowerBound, range.upperBound)
        case .onOff: field.kind = "switch"
        case .choice(let words):
            field.kind = "choice"
            field.choices = words
        }
        return field
    }
}

extension LiveSetting {
    // Aim: how the frame becomes angles.
    static let offset = LiveSetting(
        "offset", .aim, "Clear of each end", unit: "°", .number(Double(AngleMapper.offsetRange.lowerBound)...Double(AngleMapper.offsetRange.upperBound), whole: true),
        rangeNote: " (the default 40 maps the frame to 40–140°)",
        help: "Degrees kept clear of each mechanical end: frame edges map to OFFSET and 180-OFFSET.")
    static let invertX = LiveSetting("invert-x", .aim, "Mirror pan", .onOff, help: "Mirror pan (camera facing the other way).")
    static let invertY = LiveSetting("invert-y", .aim, "Mirror tilt", .onOff, help: "Mirror tilt.")
    static let trimX = LiveSetting(
        "trim-x", .aim, "Trim pan", unit: "°", .number(Double(ServoTrim.range.lowerBound)...Double(ServoTrim.range.upperBound), whole: true),
        rangeNote: " degrees; a turret further off needs its horn re-seated (docs/guide/calibration.md)",
        help: "Degrees added to every pan angle sent: a horn a tooth off, fixed in software. The console, --track and the sweep stay untrimmed."
    ).tuning()
    static let trimY = LiveSetting(
        "trim-y", .aim, "Trim tilt", unit: "°", .number(Double(ServoTrim.range.lowerBound)...Double(ServoTrim.range.upperBound), whole: true),
        rangeNote: " degrees; a turret further off needs its horn re-seated (docs/guide/calibration.md)",
        help: "Degrees added to every tilt angle sent, as --trim-x."
    ).tuning()
    static let tilt = LiveSetting(
        "tilt", .aim, "Tilt servo", .onOff, help: "Also drive a tilt servo with Y<deg>. (the original sketch knows only X and L).")
    static let deadband = LiveSetting(
        "deadband", .aim, "Dead band", unit: "°", .number(0...180, whole: true), rangeNote: " degrees", help: "Ignore aim changes of at most this many degrees.")
    static let hysteresis = LiveSetting(
        "hysteresis", .aim, "Hysteresis", unit: "°", .number(0...5), rangeNote: " degrees (default \(SteadyDegree.standardSlack))",
        help:
            "Degrees the exact angle must pass the edge of the degree sent before the next is sent: a still face never flips the servo between two degrees (0: the exact formula every frame)."
    ).tuning()

    // Target: which face is followed, and what happens when it goes.
    static let lostAfter = LiveSetting(
        "lost-after", .target, "Give up after", unit: "s", .number(0...3600), rangeNote: " seconds",
        help: "Seconds a target may be out of sight before it is given up (then --search, or another face).")
    static let search = LiveSetting(
        "search", .target, "Once it is gone", .choice(SearchPolicy.allCases.map(\.rawValue)),
        help: "Once the target is gone: scan (L: sweep), hold (stay), or last-seen (aim at the edge it left by, sweep after --lost-after).")
    static let switchMargin = LiveSetting(
        "switch-margin", .target, "Switch if larger by", .number(0...100), rangeNote: " (0.2: another face must be 20% larger)",
        help: "Another face takes over the target only when its area is larger by this share (0.2 = 20%)...").tuning()
    static let switchFrames = LiveSetting(
        "switch-frames", .target, "…for frames", .number(1...10_000, whole: true), help: "...for this many frames in a row.").tuning()

    // Smoothing of the target's centre.
    static let smooth = LiveSetting(
        "smooth", .smoothing, "Smooth the centre", .onOff, help: "Smooth the target's centre (One Euro filter): a still face stops jittering the servo.")
    static let smoothCutoff = LiveSetting(
        "smooth-cutoff", .smoothing, "Still cutoff", unit: "Hz", .number(0.01...100), rangeNote: " Hz",
        help: "Smoothing: cutoff in Hz for a still face (lower: steadier, more lag).").tuning()
    static let smoothBeta = LiveSetting(
        "smooth-beta", .smoothing, "Speed response", .number(0...100),
        help: "Smoothing: how fast the cutoff rises with speed (higher: less lag when moving).").tuning()

    // Lock and fire.
    static let lockAfter = LiveSetting(
        "lock-after", .lockFire, "Lock after", unit: "s", .number(0...3600), rangeNote: " seconds",
        help: "Seconds a target must be held to be locked (status 'Locked', --on-lock, --fire).")
    static let fireTolerance = LiveSetting(
        "fire-tolerance", .lockFire, "Aimed within", unit: "°", .number(0.1...45), rangeNote: " degrees",
        help: "Degrees between aim and target that still count as aimed.")
    static let fireCooldown = LiveSetting(
        "fire-cooldown", .lockFire, "Between shots", unit: "s", .number(ServoController.fireMinimumInterval...3600),
        rangeNote: " seconds (the firmware never fires more than once a second)", help: "Seconds between shots (at least the firmware's 1 s).")

    // Detection.
    static let detector = LiveSetting(
        "detector", .detection, "Detector", .choice([""] + DetectorOptions.Kind.allCases.map(\.rawValue)),
        help: "Face detector: blazeface, blazeface-short, haar or lbp (default: blazeface when its model is installed, else haar).")
    static let minScore = LiveSetting(
        "min-score", .detection, "Lowest score", .number(0...1), rangeNote: " (MediaPipe's default is 0.5)",
        help: "BlazeFace: lowest score a face may have, 0 to 1.")
    static let detectFps = LiveSetting(
        "detect-fps", .detection, "Full detections", unit: "/s", .rate(DetectRate.range), rangeNote: " full-frame detections a second",
        help:
            "Full-frame detections per second; the frames in between look only around the face being followed (a quarter of the work). 'every' detects on every frame in full."
    )

    // Expressions.
    static let expressions = LiveSetting(
        "expressions", .expressions, "Read the face", .onOff,
        help:
            "Read the followed face's expression, head pose and gaze every frame (the face mesh, which also follows the face between full detections). BlazeFace only."
    )
    static let expressionsFps = LiveSetting(
        "expressions-fps", .expressions, "Mesh runs", unit: "/s", .rate(1...240), rangeNote: " mesh runs a second",
        help:
            "With --expressions: face mesh runs per second of video; between them the face holds its box and reading. 'every': every frame (smoother aim, about twice the CPU)."
    )
    static let spare = LiveSetting(
        "spare", .expressions, "Never fire at", .choice(["none"] + ExpressionState.allCases.map(\.rawValue) + [ExpressionOptions.household]),
        help:
            "Never fire at a target showing this expression (e.g. smile); the status says 'Spared — smiling'. 'known': at anyone --known enrols; a name (a folder in --known): at that person; either, nor at a target not recognised yet. 'none': spare nobody. Turns on --expressions."
    )

    // A camera on the pan/tilt head: a closed loop.
    static let mount = LiveSetting(
        "mount", .turretCamera, "Camera is", .choice(Mount.allCases.map(\.rawValue)),
        help: "Where the camera is: fixed (beside the turret: the frame maps to angles) or turret (on the pan/tilt head: a closed loop).")
    static let fov = LiveSetting(
        "fov", .turretCamera, "Field of view", unit: "°", .number(1...179), rangeNote: " degrees (a typical webcam sees 60)",
        help:
            "The camera's horizontal field of view in degrees. On a fixed mount the frame then spans it around 90° (a 60° webcam: 60 to 120; without it, --offset's range, a 100° fish-eye's at 40), tilt the same degrees per pixel; on --mount turret the loop's degrees per pixel (60 unless given). The vertical one follows from the frame's aspect.")
    static let kp = LiveSetting(
        "kp", .turretCamera, "Proportional gain", .number(0.01...2), rangeNote: " (default \(TurretLoop.Gains.standard.proportional))",
        help: "Turret loop: proportional gain (share of the error corrected per frame).").tuning()
    static let ki = LiveSetting(
        "ki", .turretCamera, "Integral gain", unit: "/s", .number(0...10), rangeNote: " per second (default \(TurretLoop.Gains.standard.integral))",
        help: "Turret loop: integral gain (per second; removes the lag behind a face that keeps moving).").tuning()
    static let kd = LiveSetting(
        "kd", .turretCamera, "Derivative gain", unit: "s", .number(0...1), rangeNote: " seconds (default \(TurretLoop.Gains.standard.derivative))",
        help: "Turret loop: derivative gain (seconds).").tuning()
}
