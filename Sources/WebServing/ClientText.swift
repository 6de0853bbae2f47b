import TextOutput

/// What a client sent, made safe to put in a log line or a reply: anyone who can
/// connect chooses these bytes, and a newline in them would start a log line of
/// theirs, an escape sequence would drive the terminal that shows the log.
public enum ClientText {
    /// `text` as printable ASCII: every byte outside 0x20-0x7E (and the backslash)
    /// as `\xNN`, cut after `limit` bytes with `…`. Never two readings: `\x0a`
    /// in the output is always the client's backslash escaped or its newline.
    public static func escaped(_ text: some StringProtocol, limit: Int = 120) -> String {
        var result = ""
        for (index, byte) in text.utf8.enumerated() {
            guard index < limit else {
                result += "…"
                break
            }
            if (0x20...0x7E).contains(byte) && byte != 0x5C {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return result
    }
}
