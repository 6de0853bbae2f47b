#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Text for people, made and written without Foundation: the few things of
/// Foundation's `NSString` that sentry used (printf formats, trimming, padding)
/// would link all of Foundation, its ICU data among it, into the binary.
extension String {
    /// `format` filled in as C's printf fills it (`%.2f`, `%8.3f`, `%3d`, `%g`, `%04x`),
    /// in the C locale sentry runs in: a point for the decimals, whatever the user's locale.
    public init(printf format: String, _ arguments: any CVarArg...) {
        let length = withVaList(arguments) { vsnprintf(nil, 0, format, $0) }
        guard length > 0 else {
            self = ""
            return
        }
        var buffer = [CChar](repeating: 0, count: Int(length) + 1)
        _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        self = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Padded with spaces on the right to `width` characters (never cut).
    public func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

extension StringProtocol {
    /// Without the spaces, tabs and line ends at either end.
    public func trimmed() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0.isNewline }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[first...last])
    }
}

extension String {
    /// This text as one line: a control character (C0 such as a newline or an escape,
    /// DEL, C1 such as U+0085, the line and paragraph separators) as `\u{…}`. A log line
    /// that quotes what someone else sent stays one line of sentry's, whatever it quotes.
    public var oneLine: String {
        guard unicodeScalars.contains(where: \.isControlCharacter) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            if scalar.isControlCharacter { result += "\\u{\(String(scalar.value, radix: 16))}" } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}

extension Unicode.Scalar {
    /// What `String.oneLine` escapes.
    public var isControlCharacter: Bool { value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029 }
}

/// The process's standard streams, written whole (a short write is finished,
/// an interrupted one retried): a message on stderr is never cut.
public enum StandardStream {
    public static func writeError(_ text: String) { write(text, to: STDERR_FILENO) }
    public static func writeOutput(_ text: String) { write(text, to: STDOUT_FILENO) }

    /// Says `message` on stderr and exits with `status`: for the build tools, which have no command line to fail through.
    public static func fail(_ message: String, status: Int32 = 1) -> Never {
        writeError(message + "\n")
        exit(status)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            if result > 0 {
                written += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}

/// The user's home directory: `$HOME` as given, else the password database's entry.
public func homeDirectory(environment: [String: String]) -> String {
    if let home = environment["HOME"], !home.isEmpty { return home }
    guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return "/" }
    return String(cString: directory)
}
