import FoundationEssentials
import Tracking

/// A request to change the run that is turned down, in one line that says
/// what to send instead. Every control source (the web console, MQTT)
/// answers with it, each in its own way (a 400, a message on `…/error`).
public struct ControlRefusal: Error, Equatable, CustomStringConvertible {
    public let description: String
    /// Not wrong, only early: there is no frame yet to aim in.
    public let isTooEarly: Bool

    public init(_ description: String, tooEarly: Bool = false) {
        self.description = description
        isTooEarly = tooEarly
    }
}

/// What the control sources accept, read from their JSON the same way:
/// a change of live settings (`{"offset": 30}`) and a steering request
/// (`{"action": "point", "x": 320, "y": 240}`), checked before anything
/// is handed to the run.
public enum ControlRequests {
    /// `{"KEY": VALUE, …}`: each value in JSON's own type (the run parses it as the flag would).
    /// `known`: the settings that may change (the run checks the values).
    public static func settingChanges(fromJSON body: [UInt8], known: Set<String>) throws(ControlRefusal) -> [String: SettingValue] {
        let changes = try decode([String: SettingValue].self, from: body)
        guard !changes.isEmpty else { throw ControlRefusal("no settings given; send e.g. {\"offset\": 30}") }
        if let unknown = changes.keys.sorted().first(where: { !known.contains($0) }) {
            throw ControlRefusal("'\(unknown)' cannot be changed while running; these can: \(known.sorted().joined(separator: ", "))")
        }
        return changes
    }

    /// `{"action": …}`: `point` (x, y inside the frame), `nudge` (pan, tilt in
    /// degrees, -180 to 180), `scan`, `center`, `auto`. `frame`: the last
    /// frame's size (nil before the first: a point cannot be aimed at yet).
    public static func steering(fromJSON body: [UInt8], frame: (width: Int, height: Int)?) throws(ControlRefusal) -> SteeringRequest {
        let request = try decode(AimBody.self, from: body)
        switch request.action {
        case "point":
            guard let frame else { throw ControlRefusal("no frame yet to aim in", tooEarly: true) }
            guard let x = request.x, let y = request.y, x.isFinite, y.isFinite, (0...Double(frame.width)).contains(x), (0...Double(frame.height)).contains(y)
            else {
                throw ControlRefusal(
                    "point needs x and y inside the \(frame.width)x\(frame.height) frame, e.g. {\"action\":\"point\",\"x\":\(frame.width / 2),\"y\":\(frame.height / 2)}")
            }
            return .point(x: x, y: y)
        case "nudge":
            let pan = request.pan ?? 0, tilt = request.tilt ?? 0
            guard (-180...180).contains(pan), (-180...180).contains(tilt) else {
                throw ControlRefusal("nudge takes pan and tilt in degrees between -180 and 180, e.g. {\"action\":\"nudge\",\"pan\":2}")
            }
            return .nudge(pan: pan, tilt: tilt)
        default:
            guard let word = SteeringRequest.words.first(where: { $0.action == request.action }) else {
                throw ControlRefusal("action '\(request.action)' is not one of \(SteeringRequest.actions.joined(separator: ", "))")
            }
            return word
        }
    }

    struct AimBody: Decodable {
        var action: String
        var x: Double?
        var y: Double?
        var pan: Int?
        var tilt: Int?
    }

    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(ControlRefusal) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch {
            throw ControlRefusal("the body is not the JSON expected (\(reason(error))); send e.g. {\"offset\": 30}")
        }
    }

    static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "'\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
        case DecodingError.dataCorrupted: "not valid JSON"
        default: "\(error)"
        }
    }
}

