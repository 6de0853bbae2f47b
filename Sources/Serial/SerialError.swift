/// Why a serial port could not be used. `description` is one line naming the
/// port and the fix.
public struct SerialError: Error, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable {
        case notFound, permissionDenied, notATerminal, busy, unsupportedBaudRate, settingsRejected, disconnected, other
    }

    public var kind: Kind
    public var path: String
    public var reason: String
    public var hint: String

    public init(_ kind: Kind, path: String, reason: String, hint: String) {
        self.kind = kind
        self.path = path
        self.reason = reason
        self.hint = hint
    }

    public var description: String { "serial port \(path): \(reason); \(hint)" }
}
