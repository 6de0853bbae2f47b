/// A small XML reader for OpenCV's `FileStorage` cascade files: elements,
/// attributes, text, comments, `<?...?>` and `<!...>` declarations.
/// Enough for cascades, strict about structure, with errors that give a line.
struct XMLElement: Sendable {
    var name: String
    var children: [XMLElement] = []
    var text: String = ""
    var attributes: [String: String] = [:]

    /// The first child called `name`.
    func child(_ name: String) -> XMLElement? { children.first { $0.name == name } }
}

struct XMLSyntaxError: Error, CustomStringConvertible {
    var line: Int
    var reason: String
    var description: String { "line \(line): \(reason)" }
}

enum MiniXML {
    /// XML's whitespace: space, tab, line feed, carriage return.
    @inline(__always) static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Parses a whole document and returns its root element.
    static func parse(_ bytes: [UInt8]) throws(XMLSyntaxError) -> XMLElement {
        var reader = Reader(bytes: bytes)
        return try reader.document()
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// The error at the reading position; its line is counted only now, so reading need not.
        func fail(_ reason: String) -> XMLSyntaxError {
            XMLSyntaxError(line: 1 + bytes[..<min(index, bytes.count)].lazy.filter { $0 == UInt8(ascii: "\n") }.count, reason: reason)
        }

        var atEnd: Bool { index >= bytes.count }

        mutating func advance() { index += 1 }

        /// Whether the bytes at the reading position are `literal` (ASCII), without allocating.
        func starts(with literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
            return true
        }

        mutating func skip(past terminator: StaticString) throws(XMLSyntaxError) {
            while !atEnd {
                if starts(with: terminator) {
                    for _ in 0..<terminator.utf8CodeUnitCount { advance() }
                    return
                }
                advance()
            }
            throw fail("unterminated markup, expected '\(terminator)'")
        }

        mutating func skipWhitespace() {
            while !atEnd, MiniXML.isWhitespace(bytes[index]) { advance() }
        }

        /// Skips comments, processing instructions and declarations.
        mutating func skipMisc() throws(XMLSyntaxError) {
            while true {
                skipWhitespace()
                if starts(with: "<!--") { try skip(past: "-->") }
                else if starts(with: "<?") { try skip(past: "?>") }
                else if starts(with: "<!") { try skip(past: ">") }
                else { return }
            }
        }

        mutating func document() throws(XMLSyntaxError) -> XMLElement {
            try skipMisc()
            guard !atEnd else { throw fail("no root element (empty or not XML)") }
            guard bytes[index] == UInt8(ascii: "<") else { throw fail("expected '<' at the start of the document") }
            let root = try element()
            try skipMisc()
            guard atEnd else { throw fail("content after the root element") }
            return root
        }

        mutating func name() throws(XMLSyntaxError) -> String {
            let start = index
            while !atEnd {
                let b = bytes[index]
                let isNameByte = b >= 0x80 || (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A)
                    || b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: ":")
                guard isNameByte else { break }
                advance()
            }
            guard index > start else { throw fail("expected an element name") }
            return String(decoding: bytes[start ..< index], as: UTF8.self)
        }

        /// Reads `<name attr="...">children and text</name>` or `<name/>`.
        mutating func element(depth: Int = 0) throws(XMLSyntaxError) -> XMLElement {
            guard depth < 64 else { throw fail("elements nested too deeply") }
            advance() // "<"
            var node = XMLElement(name: try name())
            // Attributes: kept as written (no entity decoding); quotes must balance.
            while true {
                skipWhitespace()
                guard !atEnd else { throw fail("unterminated tag <\(node.name)>") }
                if starts(with: "/>") {
                    advance(); advance()
                    return node
                }
                if bytes[index] == UInt8(ascii: ">") {
                    advance()
                    break
                }
                let attribute = try name()
                skipWhitespace()
                guard !atEnd, bytes[index] == UInt8(ascii: "=") else { throw fail("expected '=' in tag <\(node.name)>") }
                advance()
                skipWhitespace()
                guard !atEnd, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                    throw fail("expected a quoted attribute value in <\(node.name)>")
                }
                let quote = bytes[index]
                advance()
                let valueStart = index
                while !atEnd, bytes[index] != quote { advance() }
                guard !atEnd else { throw fail("unterminated attribute in <\(node.name)>") }
                node.attributes[attribute] = String(decoding: bytes[valueStart..<index], as: UTF8.self)
                advance()
            }
            var text = ""
            while true {
                guard !atEnd else { throw fail("element <\(node.name)> is not closed") }
                if bytes[index] != UInt8(ascii: "<") {
                    // The run of text up to the next markup, made into a String once (most elements
                    // have one run, and appending to an empty String just takes the run's storage).
                    let start = index
                    while !atEnd, bytes[index] != UInt8(ascii: "<") { advance() }
                    text += String(decoding: bytes[start..<index], as: UTF8.self)
                } else if starts(with: "</") {
                    index += 2
                    let closing = try name()
                    guard closing == node.name else { throw fail("</\(closing)> closes <\(node.name)>") }
                    skipWhitespace()
                    guard !atEnd, bytes[index] == UInt8(ascii: ">") else { throw fail("expected '>' after </\(closing)") }
                    advance()
                    node.text = text
                    return node
                } else if starts(with: "<!--") {
                    try skip(past: "-->")
                } else {
                    node.children.append(try element(depth: depth + 1))
                }
            }
        }
    }
}
