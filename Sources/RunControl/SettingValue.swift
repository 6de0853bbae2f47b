/// A live setting's value as it crosses from the run to a control source and
/// back: JSON's own types (`{"offset": 40, "tilt": false, "search": "hold"}`),
/// never a string standing in for a number or a switch, so a page or a script
/// reads it without knowing each setting's type.
public enum SettingValue: Codable, Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case integer(Int)
    case number(Double)
    /// A choice's word ("" for automatic), or a rate's `every`.
    case word(String)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .word(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .word(let value): try container.encode(value)
        }
    }

    /// As it would be typed after the flag: the run parses a change as its flag does.
    public var argument: String {
        switch self {
        case .bool(let value): String(value)
        case .integer(let value): String(value)
        case .number(let value): String(value)
        case .word(let value): value
        }
    }

    public var description: String { argument }
}

extension ControlRequests {
    /// `offset = 30, tilt = true`: the changed settings as they are after a change, for the log lines every source writes.
    public static func describe(_ changes: [String: SettingValue], after values: [String: SettingValue]) -> String {
        changes.keys.sorted().map { "\($0) = \(values[$0]?.argument ?? "")" }.joined(separator: ", ")
    }
}
