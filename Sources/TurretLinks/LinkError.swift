import Serial

/// Why a link to the turret could not be opened. `description` is one line
/// naming the link (`serial port PATH` or `relay ws://…`) and the fix.
public struct LinkError: Error, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The serial port's own failure (not found, permission denied, busy, …).
        case serialPort(SerialError.Kind)
        /// The relay could not be reached or refused the connection.
        case relayUnreachable
    }

    public var kind: Kind
    /// `serial port /dev/ttyACM0` or `relay ws://pi.local:12354/`.
    public var link: String
    public var reason: String
    public var hint: String

    public init(_ kind: Kind, link: String, reason: String, hint: String) {
        self.kind = kind
        self.link = link
        self.reason = reason
        self.hint = hint
    }

    /// A serial port's error, as the link's.
    public init(_ error: SerialError) {
        self.init(.serialPort(error.kind), link: "serial port \(error.path)", reason: error.reason, hint: error.hint)
    }

    public var description: String { "\(link): \(reason); \(hint)" }
}
