import TurretProtocol

/// What the relay makes of one WebSocket message (SPEC §8): the protocol
/// commands it holds, or why it is refused. Only messages that are nothing
/// but valid commands (`X90.`, `Y45.`, `L`, `F90.`, several in a row,
/// optionally separated by whitespace or newlines, as a netcat user types
/// them) ever reach the turret; anything else is refused whole.
public enum RelayVerdict: Equatable, Sendable {
    case commands([Command])
    /// Refused: the close code and reason to answer with (RFC 6455 §7.4).
    case refused(code: UInt16, reason: String)

    /// The largest message taken, in bytes.
    public static let maximumSize = 1024

    /// The close code for a shot the relay may not pass (policy violation).
    public static let unarmedCode: UInt16 = 1008

    /// Judges a text message's bytes; a shot (`F`) is refused unless the
    /// relay was started with `--fire` (`armed`).
    public static func text(_ bytes: [UInt8], armed: Bool = false) -> RelayVerdict {
        guard bytes.count <= maximumSize else { return .refused(code: 1009, reason: "messages are at most \(maximumSize) bytes") }
        guard String(validating: bytes, as: UTF8.self) != nil else { return .refused(code: 1007, reason: "not UTF-8 text") }
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var commands: [Command] = []
        // Whitespace may separate commands, never split one.
        for word in bytes.split(whereSeparator: whitespace.contains) {
            let decoded = Command.decode(word)
            guard decoded.flatMap(\.bytes) == Array(word) else {
                return .refused(code: 1007, reason: "not protocol commands (X<deg>. Y<deg>. L F<deg>.)")
            }
            commands += decoded
        }
        if !armed, commands.contains(where: { $0.axis == .trigger }) {
            return .refused(code: unarmedCode, reason: "this relay was started without --fire: F (fire) is refused")
        }
        return .commands(commands)
    }

    /// Binary messages are never commands.
    public static let binary = RelayVerdict.refused(code: 1003, reason: "binary messages are not commands; send text such as X90.")
}
