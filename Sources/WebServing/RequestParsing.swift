import TextOutput

/// A request the server answers itself, before any handler: malformed, too
/// large, too slow. The status and one line saying what was wrong, which never
/// repeats the client's bytes raw (see `ClientText`).
public struct HTTPRefusal: Error, Equatable, Sendable {
    public let status: HTTPStatus
    public let message: String
    /// Header fields the refusal needs (`Sec-WebSocket-Version` on a 426).
    public let headers: HTTPHeaders

    public init(_ status: HTTPStatus, _ message: String, headers: HTTPHeaders = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    /// The answer sent for it.
    public var response: HTTPResponse {
        var response = HTTPResponse.text(status, message)
        for field in headers { response.headers.append(name: field.name, value: field.value) }
        return response
    }
}

/// An HTTP/1.1 request head (RFC 9112 §2-5) read as the bytes it is, never as
/// Unicode text: a method and field names are tokens, field values visible bytes
/// with spaces and tabs only, lines end in CRLF and nothing else, names compare
/// in ASCII case, `Content-Length` is digits alone, and a body is only ever what
/// `Content-Length` declared. Each rule refuses something a lenient server took
/// (see the tests): a smuggled body, a forged log line, a header that reads as
/// another after Unicode case folding.
public enum RequestParsing {
    /// The most header fields taken.
    public static let maximumFields = 64

    /// Fields that mean one thing: a second copy is refused, never picked from.
    static let singleFields = [
        "Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Authorization", "Cookie", "Origin", "Upgrade", "Sec-WebSocket-Key",
        "Sec-WebSocket-Version",
    ]

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
    /// without its body; `bodyLength` says how many bytes of body follow (0 without `Content-Length`).
    public static func parse(head: ArraySlice<UInt8>, peer: String) throws(HTTPRefusal) -> (request: HTTPRequest, bodyLength: Int) {
        let lines = try self.lines(of: head)
        guard let requestLine = lines.first, !requestLine.isEmpty else { throw HTTPRefusal(.badRequest, "no request line") }
        let (method, target, version) = try parse(requestLine: requestLine)

        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard headers.fields.count < maximumFields else { throw HTTPRefusal(.headersTooLarge, "more than \(maximumFields) header fields") }
            headers.append(try field(in: line))
        }
        for name in singleFields where headers.count(of: name) > 1 { throw HTTPRefusal(.badRequest, "two \(name) headers; send one") }
        guard let host = headers["Host"] else { throw HTTPRefusal(.badRequest, "a request needs a Host header") }
        guard isHostValue(Array(host.utf8)) else { throw HTTPRefusal(.badRequest, "the Host header is not HOST[:PORT]") }
        guard headers["Transfer-Encoding"] == nil else {
            throw HTTPRefusal(.lengthRequired, "chunked bodies are not taken; send the body with Content-Length")
        }
        var bodyLength = 0
        if let length = headers["Content-Length"] {
            // Digits alone: no sign, no spaces of any kind, no list, at most 9 of them (the limits are far smaller).
            let digits = Array(length.utf8)
            guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy(HTTPBytes.isDigit) else {
                throw HTTPRefusal(.badRequest, "Content-Length must be one number of bytes, digits only")
            }
            bodyLength = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        var originForm = target
        if let (authority, rest) = try absoluteForm(target) {
            // RFC 9112 §3.2.2: the target's authority wins over the Host field, and is checked as one.
            guard isHostValue(Array(authority)) else { throw HTTPRefusal(.badRequest, "the target's host is not HOST[:PORT]") }
            headers.replace("Host", with: String(decoding: authority, as: UTF8.self))
            originForm = rest
        }
        let (path, query) = try split(target: originForm)
        let request = HTTPRequest(method: method, path: path, query: query, headers: headers, version: version, peer: peer)
        return (request, bodyLength)
    }

    /// The head's lines without their CRLFs (the blank line at the end dropped); a NUL,
    /// or a CR or LF that is not part of a CRLF, refuses the whole head.
    static func lines(of head: ArraySlice<UInt8>) throws(HTTPRefusal) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex, index = head.startIndex
        while index < head.endIndex {
            switch head[index] {
            case 0x00: throw HTTPRefusal(.badRequest, "the request head holds a NUL byte")
            case 0x0D:
                guard index + 1 < head.endIndex, head[index + 1] == 0x0A else { throw HTTPRefusal(.badRequest, "a CR without LF in the request head") }
                lines.append(head[start..<index])
                index += 2
                start = index
            case 0x0A: throw HTTPRefusal(.badRequest, "an LF without CR in the request head")
            default: index += 1
            }
        }
        if start < head.endIndex { lines.append(head[start...]) }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// `METHOD SP TARGET SP HTTP/1.x`, single spaces.
    static func parse(requestLine: ArraySlice<UInt8>) throws(HTTPRefusal) -> (method: String, target: ArraySlice<UInt8>, version: HTTPVersion) {
        let parts = requestLine.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(HTTPBytes.isToken) else {
            throw HTTPRefusal(.badRequest, "the request line is not METHOD TARGET HTTP/1.1")
        }
        let version: HTTPVersion
        switch Array(parts[2]) {
        case Array("HTTP/1.1".utf8): version = .http1_1
        case Array("HTTP/1.0".utf8): version = .http1_0
        case let other where other.count == 8 && other.starts(with: "HTTP/".utf8) && HTTPBytes.isDigit(other[5]) && other[6] == 0x2E
            && HTTPBytes.isDigit(other[7]):
            throw HTTPRefusal(.versionNotSupported, "HTTP/\(Character(Unicode.Scalar(other[5]))).\(Character(Unicode.Scalar(other[7]))) is not taken; speak HTTP/1.1")
        default: throw HTTPRefusal(.badRequest, "the request line is not METHOD TARGET HTTP/1.1")
        }
        let target = parts[1]
        // origin-form (a path, then a query) or absolute-form (http://HOST[:PORT] before it);
        // visible ASCII without a fragment.
        guard target.first == 0x2F || hasHTTPScheme(target), target.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x23 }) else {
            throw HTTPRefusal(.badRequest, "the target must be a path such as /api/status")
        }
        return (String(decoding: parts[0], as: UTF8.self), target, version)
    }

    private static let httpScheme = Array("http://".utf8)

    private static func hasHTTPScheme(_ target: ArraySlice<UInt8>) -> Bool {
        target.count > httpScheme.count && zip(target, httpScheme).allSatisfy { HTTPBytes.lowercased($0) == $1 }
    }

    /// An absolute-form target (`http://HOST[:PORT]/path?query`, which a server must take, RFC 9112
    /// §3.2.2) as its authority and its origin-form (`/` when it has no path); nil for a path.
    static func absoluteForm(_ target: ArraySlice<UInt8>) throws(HTTPRefusal) -> (authority: ArraySlice<UInt8>, originForm: ArraySlice<UInt8>)? {
        guard target.first != 0x2F else { return nil }
        let afterScheme = target.dropFirst(httpScheme.count)
        let end = afterScheme.firstIndex { $0 == 0x2F || $0 == 0x3F } ?? afterScheme.endIndex
        let authority = afterScheme[..<end]
        guard !authority.isEmpty, !authority.contains(0x40) else { throw HTTPRefusal(.badRequest, "the target's authority must be HOST[:PORT], without a user") }
        if end == afterScheme.endIndex { return (authority, ArraySlice([0x2F])) }
        if afterScheme[end] == 0x3F { return (authority, ArraySlice([0x2F] + afterScheme[end...])) }
        return (authority, afterScheme[end...])
    }

    /// `NAME: VALUE`: a token, a colon at once, the value between optional spaces and tabs.
    static func field(in line: ArraySlice<UInt8>) throws(HTTPRefusal) -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex, line[..<colon].allSatisfy(HTTPBytes.isToken) else {
            // A line that starts with a space or tab is an obsolete folded line, refused as well.
            throw HTTPRefusal(.badRequest, "a header line is not NAME: VALUE")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, HTTPBytes.isBlank(first) { value.removeFirst() }
        while let last = value.last, HTTPBytes.isBlank(last) { value.removeLast() }
        let name = String(decoding: line[..<colon], as: UTF8.self)
        guard value.allSatisfy(HTTPBytes.isFieldValue) else {
            throw HTTPRefusal(.badRequest, "the \(ClientText.escaped(name, limit: 40)) header holds a control byte")
        }
        guard let text = String(validating: value, as: UTF8.self), !text.unicodeScalars.contains(where: { $0.isControlCharacter && $0 != "\t" }) else {
            throw HTTPRefusal(.badRequest, "the \(ClientText.escaped(name, limit: 40)) header is not UTF-8 text without control characters")
        }
        return (name, text)
    }

    /// `name[:port]`: a name of letters, digits, `-`, `.`, `_`, `~`, an IPv6 literal in brackets, and at most 5 port digits.
    static func isHostValue(_ bytes: [UInt8]) -> Bool {
        var name = bytes[...]
        if let colon = bytes.lastIndex(of: 0x3A), bytes.first != 0x5B || bytes[colon - 1] == 0x5D {
            let port = bytes[(colon + 1)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(HTTPBytes.isDigit) else { return false }
            name = bytes[..<colon]
        }
        if name.first == 0x5B {
            let inside = name.dropFirst().dropLast()
            return name.last == 0x5D && !inside.isEmpty && inside.allSatisfy { HTTPBytes.isHexDigit($0) || $0 == 0x3A || $0 == 0x2E }
        }
        return !name.isEmpty && name.allSatisfy { HTTPBytes.isAlphanumeric($0) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F || $0 == 0x7E }
    }

    /// The decoded path and query items of a target (`/?token=a%20b` → `/`, [token: "a b"]). A
    /// path or an item that decodes to a control byte or to bytes that are not UTF-8 is refused:
    /// no route has one, and a log line would carry it.
    static func split(target: ArraySlice<UInt8>) throws(HTTPRefusal) -> (path: String, query: [HTTPRequest.QueryItem]) {
        let mark = target.firstIndex(of: 0x3F) ?? target.endIndex
        guard let path = percentDecoded(target[..<mark]).flatMap(printable) else {
            throw HTTPRefusal(.badRequest, "the path has a bad %-escape or decodes to a control byte")
        }
        guard mark < target.endIndex else { return (path, []) }
        var items: [HTTPRequest.QueryItem] = []
        for pair in target[(mark + 1)...].split(separator: 0x26) {
            let nameValue = pair.split(separator: 0x3D, maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ part: ArraySlice<UInt8>) throws(HTTPRefusal) -> String {
                let spaced = part.map { $0 == 0x2B ? 0x20 : $0 }
                guard let text = percentDecoded(spaced[...]).flatMap(printable) else {
                    throw HTTPRefusal(.badRequest, "the query has a bad %-escape or decodes to a control byte")
                }
                return text
            }
            items.append(HTTPRequest.QueryItem(name: try decoded(nameValue[0]), value: nameValue.count > 1 ? try decoded(nameValue[1]) : ""))
        }
        return (path, items)
    }

    /// `text` when it holds no control character (C0, DEL or C1).
    private static func printable(_ text: String) -> String? {
        text.unicodeScalars.contains(where: \.isControlCharacter) ? nil : text
    }

    /// `text` with its `%XX` escapes decoded (exactly two hex digits each); nil when one is malformed or the result is not UTF-8.
    public static func percentDecoded(_ text: some StringProtocol) -> String? { percentDecoded(Array(text.utf8)[...]) }

    static func percentDecoded(_ encoded: ArraySlice<UInt8>) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var index = encoded.startIndex
        while index < encoded.endIndex {
            guard encoded[index] == 0x25 else {
                bytes.append(encoded[index])
                index += 1
                continue
            }
            guard index + 2 < encoded.endIndex, let high = HTTPBytes.hexValue(encoded[index + 1]), let low = HTTPBytes.hexValue(encoded[index + 2]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index += 3
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `text` with every byte but letters and digits as `%XX` (a cookie's value).
    public static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if HTTPBytes.isAlphanumeric(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return result
    }
}

/// The classes of bytes HTTP's grammar is made of (RFC 9110 §5.6.2, §5.5), by table.
enum HTTPBytes {
    /// `tchar`: what a method, a field name or a token in a list may be made of.
    private static let tokenTable: [Bool] = (0..<256).map { byte in
        isAlphanumeric(UInt8(byte)) || Array("!#$%&'*+-.^_`|~".utf8).contains(UInt8(byte))
    }

    static func isToken(_ byte: UInt8) -> Bool { tokenTable[Int(byte)] }
    static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    static func isAlphanumeric(_ byte: UInt8) -> Bool { isDigit(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    static func isHexDigit(_ byte: UInt8) -> Bool { hexValue(byte) != nil }
    /// Space or horizontal tab: the only white space HTTP has.
    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    /// Visible ASCII, bytes above 127 (checked as UTF-8 afterwards), spaces and tabs.
    static func isFieldValue(_ byte: UInt8) -> Bool { (0x21...0x7E).contains(byte) || byte >= 0x80 || isBlank(byte) }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    static func lowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }

    /// `text` with A-Z as a-z and nothing else changed.
    static func lowercased(_ text: String) -> String { String(decoding: text.utf8.map(lowercased), as: UTF8.self) }

    /// Equal in ASCII case only: a Kelvin sign is no `k`.
    static func equalIgnoringASCIICase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    /// The comma-separated items of a list value (`Connection: keep-alive, Upgrade`), each without its spaces and tabs.
    static func listItems(_ value: String) -> [Substring] {
        value.utf8.split(separator: 0x2C).map { withoutBlanks(Substring($0)) }
    }

    /// `application/json` of `Application/JSON; charset=utf-8`.
    static func mediaType(of contentType: String) -> String {
        lowercased(String(withoutBlanks(contentType.utf8.split(separator: 0x3B, omittingEmptySubsequences: false).first.map { Substring($0) } ?? "")))
    }

    private static func withoutBlanks(_ text: Substring) -> Substring {
        var text = text.utf8[...]
        while let first = text.first, isBlank(first) { text.removeFirst() }
        while let last = text.last, isBlank(last) { text.removeLast() }
        return Substring(text)
    }
}
