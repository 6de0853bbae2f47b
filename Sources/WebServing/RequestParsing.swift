import TextOutput

/// A request the server answers itself, before any handler: malformed, too
/// large, too slow. The status and one line saying what was wrong.
public struct HTTPRefusal: Error, Equatable, Sendable {
    public let status: HTTPStatus
    public let message: String

    public init(_ status: HTTPStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}

/// An HTTP/1.1 request head (RFC 9112 §2-5) out of the bytes before the blank
/// line. Strict where leniency has bitten servers: one `Host`, no `Transfer-Encoding`
/// (the clients sentry serves send `Content-Length`), no folded lines, no bare LF.
public enum RequestParsing {
    /// The most header fields taken.
    public static let maximumFields = 64

    /// The end of the head in `bytes` (the index after its blank line), or nil while it is incomplete.
    /// Only a blank line ending at `start` or after is looked for: the bytes before it were looked at
    /// already (a head that comes a byte at a time is not searched again from its start each time).
    public static func endOfHead(in bytes: [UInt8], from start: Int = 0) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in max(3, start)..<bytes.count where bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A && bytes[index - 3] == 0x0D
        {
            return index + 1
        }
        return nil
    }

    /// The request in `head` (its request line and fields, ending with the blank line),
    /// without its body; `bodyLength` says how many bytes of body follow.
    public static func parse(head: ArraySlice<UInt8>, peer: String) throws(HTTPRefusal) -> (request: HTTPRequest, bodyLength: Int) {
        guard let text = String(validating: head, as: UTF8.self) else { throw HTTPRefusal(.badRequest, "the request head is not UTF-8 text") }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        while lines.last == "" { lines.removeLast() }
        guard let requestLine = lines.first else { throw HTTPRefusal(.badRequest, "no request line") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isUppercase || $0 == "-" }) else {
            throw HTTPRefusal(.badRequest, "the request line is not METHOD TARGET HTTP/1.1")
        }
        guard parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            throw HTTPRefusal(.versionNotSupported, "\(parts[2].prefix(16)) is not HTTP/1.1")
        }
        let target = parts[1]
        guard target.hasPrefix("/"), !target.contains(where: { $0.isWhitespace || $0 == "#" }) else {
            throw HTTPRefusal(.badRequest, "the target must be a path such as /api/status")
        }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard headers.fields.count < maximumFields else { throw HTTPRefusal(.headersTooLarge, "more than \(maximumFields) header fields") }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(where: { $0.isWhitespace }), !line.contains("\n"), !line.contains("\r")
            else {
                throw HTTPRefusal(.badRequest, "a header line is not NAME: VALUE")
            }
            headers.append(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmed())
        }
        guard headers.count(of: "Host") == 1 else { throw HTTPRefusal(.badRequest, "a request needs exactly one Host header") }
        guard headers["Transfer-Encoding"] == nil else {
            throw HTTPRefusal(.lengthRequired, "chunked bodies are not taken; send the body with Content-Length")
        }
        var bodyLength = 0
        if headers["Content-Length"] != nil {
            guard headers.count(of: "Content-Length") == 1, let length = headers["Content-Length"].flatMap({ Int($0) }), length >= 0 else {
                throw HTTPRefusal(.badRequest, "Content-Length must be one number of bytes")
            }
            bodyLength = length
        }
        let (path, query) = split(target: target)
        guard let decodedPath = percentDecoded(path) else { throw HTTPRefusal(.badRequest, "the path has a bad %-escape") }
        let request = HTTPRequest(method: String(parts[0]), path: decodedPath, query: query, headers: headers, peer: peer)
        return (request, bodyLength)
    }

    /// The path and the query items of a target (`/?token=a%20b` → `/`, [token: "a b"]).
    static func split(target: Substring) -> (path: Substring, query: [HTTPRequest.QueryItem]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, []) }
        let items = target[target.index(after: mark)...].split(separator: "&").map { pair in
            let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String { percentDecoded(text.replacing("+", with: " ")) ?? String(text) }
            return HTTPRequest.QueryItem(name: decoded(nameValue[0]), value: nameValue.count > 1 ? decoded(nameValue[1]) : "")
        }
        return (target[..<mark], items)
    }

    /// `text` with its `%XX` escapes decoded; nil when one is malformed or the result is not UTF-8.
    public static func percentDecoded(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `text` with every byte but letters and digits as `%XX` (a cookie's value).
    public static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return result
    }
}
