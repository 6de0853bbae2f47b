/// A host → Arduino command of the serial protocol (SPEC §3).
public enum Command: Hashable, Sendable, CustomStringConvertible {
    /// `X<deg>.`: aim the pan servo.
    case pan(Int)
    /// `Y<deg>.`: aim the tilt servo (extension, sent only with tilt enabled).
    case tilt(Int)
    /// `L`: target lost, sweep.
    case lost
    /// `F<deg>.`: fire, confirming the pan angle the servo is expected to
    /// hold (extension, sent only with `--fire`). The firmware refuses it
    /// unless that is the aim it holds, settled, not sweeping, and not too
    /// soon after the last shot.
    case fire(Int)

    /// The largest angle the protocol carries.
    public static let maxAngle = 180

    /// The exact bytes on the wire: ASCII, no terminator besides `.`.
    public var bytes: [UInt8] { Array(description.utf8) }

    public var description: String {
        switch self {
        case .pan(let degrees): "X\(degrees)."
        case .tilt(let degrees): "Y\(degrees)."
        case .lost: "L"
        case .fire(let degrees): "F\(degrees)."
        }
    }

    /// The axis the command drives: the pan axis owns both `X` and `L`; a
    /// shot has an axis of its own.
    public var axis: Axis {
        switch self {
        case .pan, .lost: .pan
        case .tilt: .tilt
        case .fire: .trigger
        }
    }

    public enum Axis: Hashable, Sendable { case pan, tilt, trigger }

    /// Splits a byte stream into the commands it holds, the way the firmware
    /// reads it. Bytes that form no valid command are skipped.
    public static func decode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [Command] {
        var parser = CommandParser()
        return bytes.compactMap { parser.consume($0) }
    }
}

/// The firmware's byte-at-a-time protocol parser (SPEC §3), without the servo.
///
/// - `X`/`Y`/`F` start a number; up to three digits; `.` ends it. A number
///   with more than three digits or above 180 is discarded.
/// - `L` is a command on its own.
/// - Any other byte ends a number in progress without effect; a new `X`,
///   `Y`, `F` or `L` always starts afresh.
public struct CommandParser: Hashable, Sendable {
    private enum State: Hashable, Sendable {
        case idle
        case number(axis: Command.Axis, value: Int, digits: Int)
        /// An over-long number: skip to its `.` without acting.
        case discarding
    }

    private var state = State.idle

    public init() {}

    /// True when a command has started but not yet ended.
    public var isInsideCommand: Bool { state != .idle }

    /// Feeds one byte; returns a command when this byte completes one.
    public mutating func consume(_ byte: UInt8) -> Command? {
        switch byte {
        case UInt8(ascii: "X"):
            state = .number(axis: .pan, value: 0, digits: 0)
        case UInt8(ascii: "Y"):
            state = .number(axis: .tilt, value: 0, digits: 0)
        case UInt8(ascii: "F"):
            state = .number(axis: .trigger, value: 0, digits: 0)
        case UInt8(ascii: "L"):
            state = .idle
            return .lost
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            if case .number(let axis, let value, let digits) = state {
                state =
                    digits < 3
                    ? .number(axis: axis, value: value * 10 + Int(byte - UInt8(ascii: "0")), digits: digits + 1)
                    : .discarding
            }
        case UInt8(ascii: "."):
            defer { state = .idle }
            if case .number(let axis, let value, let digits) = state, digits > 0, value <= Command.maxAngle {
                switch axis {
                case .pan: return .pan(value)
                case .tilt: return .tilt(value)
                case .trigger: return .fire(value)
                }
            }
        default:
            state = .idle
        }
        return nil
    }
}
