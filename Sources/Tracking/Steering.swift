import Geometry

/// Who points the turret.
public enum Steering: Sendable, Equatable {
    /// Face tracking (the normal case).
    case tracking
    /// A person, through the web console: hold this aim.
    case manual(Aim)
    /// A person asked for a sweep (`L`).
    case manualScan

    public var isManual: Bool { self != .tracking }
}

/// A person's request from the web console, resolved against the frame it
/// arrives with.
public enum SteeringRequest: Sendable, Equatable {
    /// Aim at this point of the frame (a click on the video), in pixels.
    case point(x: Double, y: Double)
    /// Move by these degrees from where the turret is told to be.
    case nudge(pan: Int, tilt: Int)
    /// Sweep (`L`).
    case scan
    /// Aim at 90° on every axis in use.
    case center
    /// Hand the turret back to face tracking.
    case auto

    /// The requests that are a word alone, in the order they are offered (Home Assistant's select, MQTT's bare words).
    public static let words: [SteeringRequest] = [.auto, .scan, .center]

    /// Every action's name, as requests give it.
    public static let actions = ["point", "nudge"] + words.map(\.action)

    /// The action's name, as requests give it.
    public var action: String {
        switch self {
        case .point: "point"
        case .nudge: "nudge"
        case .scan: "scan"
        case .center: "center"
        case .auto: "auto"
        }
    }
}
