import Glibc

/// A small XML reader for OpenCV's `FileStorage` cascade files and dlib's
/// imglab label files: elements, attributes, text, comments, `<?...?>` and
/// `<!...>` declarations. Enough for those, strict about structure, with
/// errors that give a line. Pure: it reads bytes, the caller reads the file.
///
/// The tree is flat: every element is a record in one array, in document
/// order, pointing into the file's bytes for its name, attributes and text.
/// The default cascade has ~20,000 elements; a tree of nodes with their own
/// strings and arrays cost that many allocations to build and as many to
/// free, most of a fresh process's cascade load.
public final class MiniXMLDocument: Sendable {
    /// The file as read; names, attributes and text are ranges of it.
    public let bytes: [UInt8]
    fileprivate let elements: [Record]
    fileprivate let attributes: [Attribute]
    fileprivate let textRuns: [TextRun]

    fileprivate init(bytes: [UInt8], elements: [Record], attributes: [Attribute], textRuns: [TextRun]) {
        self.bytes = bytes
        self.elements = elements
        self.attributes = attributes
        self.textRuns = textRuns
    }

    /// The document's one top-level element.
    public var root: MiniXMLElement { MiniXMLElement(document: self, index: 0) }

    fileprivate static let none: Int32 = -1

    fileprivate struct Record {
        var name: Range<Int32>
        var firstChild = none, nextSibling = none
        var childCount: Int32 = 0
        /// The element's attributes are `attributes[attributeStart ..< attributeStart + attributeCount]`.
        var attributeStart: Int32, attributeCount: Int32 = 0
        /// The first of the element's runs of text (comments and children split them), linked in order.
        var firstText = none
    }

    fileprivate struct Attribute {
        var name: Range<Int32>
        var value: Range<Int32>
    }

    fileprivate struct TextRun {
        var bytes: Range<Int32>
        var next = none
    }

    fileprivate func string(_ range: Range<Int32>) -> String {
        String(decoding: bytes[range.offsets], as: UTF8.self)
    }

    fileprivate func bytes(_ range: Range<Int32>, equal name: String) -> Bool {
        bytes[range.offsets].elementsEqual(name.utf8)
    }
}

/// One element of an `MiniXMLDocument`: its name, attributes, children and text.
public struct MiniXMLElement: Sendable {
    public let document: MiniXMLDocument
    fileprivate let index: Int32

    private var record: MiniXMLDocument.Record { document.elements[Int(index)] }

    public var name: String { document.string(record.name) }

    /// The first child called `name`.
    public func child(_ name: String) -> MiniXMLElement? { children.first { document.bytes(document.elements[Int($0.index)].name, equal: name) } }

    public var children: Children { Children(document: document, head: record.firstChild, count: Int(record.childCount)) }

    /// The value of the attribute `name` as written (no entity decoding); the last one if it repeats.
    public func attribute(_ name: String) -> String? {
        let record = record
        let range = record.attributeStart..<record.attributeStart + record.attributeCount
        guard let found = document.attributes[range.offsets].last(where: { document.bytes($0.name, equal: name) })
        else { return nil }
        return document.string(found.value)
    }

    /// All the element's own text, its runs joined (markup between them left out).
    public var text: String { String(decoding: joinedText(), as: UTF8.self) }

    /// Calls `body` with the element's text: the file's own bytes when it is one run (as it is
    /// in cascades), a joined copy otherwise, so that numbers are read without a String per element.
    /// The byte after the buffer can be read and ends any number: `<` in the file, NUL in a copy.
    public func withText<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let first = record.firstText
        if first == MiniXMLDocument.none || document.textRuns[Int(first)].next == MiniXMLDocument.none {
            let range = first == MiniXMLDocument.none ? 0..<0 : document.textRuns[Int(first)].bytes
            return document.bytes.withUnsafeBufferPointer { file in
                body(UnsafeBufferPointer(rebasing: file[range.offsets]))
            }
        }
        var joined = joinedText()
        let count = joined.count
        joined.append(0)
        return joined.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[..<count])) }
    }

    private func joinedText() -> [UInt8] {
        var bytes: [UInt8] = []
        var run = record.firstText
        while run != MiniXMLDocument.none {
            let text = document.textRuns[Int(run)]
            bytes.append(contentsOf: document.bytes[text.bytes.offsets])
            run = text.next
        }
        return bytes
    }

    /// An element's children in document order.
    public struct Children: Sequence {
        let document: MiniXMLDocument
        let head: Int32
        public let count: Int

        public var isEmpty: Bool { count == 0 }
        public var first: MiniXMLElement? { isEmpty ? nil : MiniXMLElement(document: document, index: head) }

        public func makeIterator() -> Iterator { Iterator(document: document, upcoming: head) }

        public struct Iterator: IteratorProtocol {
            let document: MiniXMLDocument
            var upcoming: Int32

            public mutating func next() -> MiniXMLElement? {
                guard upcoming != MiniXMLDocument.none else { return nil }
                defer { upcoming = document.elements[Int(upcoming)].nextSibling }
                return MiniXMLElement(document: document, index: upcoming)
            }
        }
    }
}

extension Range<Int32> {
    /// The range as array indices: the records keep 32-bit ranges to stay small.
    fileprivate var offsets: Range<Int> { Int(lowerBound)..<Int(upperBound) }
}

public struct XMLSyntaxError: Error, CustomStringConvertible {
    public var line: Int
    public var reason: String
    public var description: String { "line \(line): \(reason)" }
}

public enum MiniXML {
    /// XML's whitespace: space, tab, line feed, carriage return.
    @inlinable public static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Parses a whole document.
    public static func parse(_ bytes: [UInt8]) throws(XMLSyntaxError) -> MiniXMLDocument {
        // Ranges are 32-bit to keep the records small; no cascade comes near 2 GB.
        guard bytes.count < Int(Int32.max) else { throw XMLSyntaxError(line: 0, reason: "larger than 2 GB") }
        let reader = try bytes.withUnsafeBufferPointer { (bytes) throws(XMLSyntaxError) -> Reader in
            var reader = Reader(bytes: bytes)
            try reader.document()
            return reader
        }
        return MiniXMLDocument(bytes: bytes, elements: reader.elements, attributes: reader.attributes, textRuns: reader.textRuns)
    }

    private struct Reader {
        /// Only while `parse` runs.
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var elements: [MiniXMLDocument.Record] = []
        var attributes: [MiniXMLDocument.Attribute] = []
        var textRuns: [MiniXMLDocument.TextRun] = []

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            // Room for a cascade's elements and text (an element takes 30-50 bytes of the file),
            // so that the arrays are not copied as they grow.
            elements.reserveCapacity(bytes.count / 32)
            textRuns.reserveCapacity(bytes.count / 32)
        }

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
                if starts(with: "<!--") {
                    try skip(past: "-->")
                } else if starts(with: "<?") {
                    try skip(past: "?>")
                } else if starts(with: "<!") {
                    try skip(past: ">")
                } else {
                    return
                }
            }
        }

        mutating func document() throws(XMLSyntaxError) {
            try skipMisc()
            guard !atEnd else { throw fail("no root element (empty or not XML)") }
            guard bytes[index] == UInt8(ascii: "<") else { throw fail("expected '<' at the start of the document") }
            try element()
            try skipMisc()
            guard atEnd else { throw fail("content after the root element") }
        }

        mutating func name() throws(XMLSyntaxError) -> Range<Int32> {
            let start = index
            while !atEnd {
                let b = bytes[index]
                let isNameByte =
                    b >= 0x80 || (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A)
                    || b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: ":")
                guard isNameByte else { break }
                advance()
            }
            guard index > start else { throw fail("expected an element name") }
            return Int32(start)..<Int32(index)
        }

        func string(_ range: Range<Int32>) -> String {
            String(decoding: bytes[range.offsets], as: UTF8.self)
        }

        /// Reads `<name attr="...">children and text</name>` or `<name/>` into a new record
        /// and returns its index.
        @discardableResult
        mutating func element(depth: Int = 0) throws(XMLSyntaxError) -> Int32 {
            guard depth < 64 else { throw fail("elements nested too deeply") }
            advance()  // "<"
            let name = try name()
            let me = Int32(elements.count)
            elements.append(MiniXMLDocument.Record(name: name, attributeStart: Int32(attributes.count)))
            // The record's links are filled in as its attributes, text and children are read.
            var lastChild = MiniXMLDocument.none, lastText = MiniXMLDocument.none
            // Attributes: kept as written (no entity decoding); quotes must balance.
            while true {
                skipWhitespace()
                guard !atEnd else { throw fail("unterminated tag <\(string(name))>") }
                if starts(with: "/>") {
                    advance(); advance()
                    return me
                }
                if bytes[index] == UInt8(ascii: ">") {
                    advance()
                    break
                }
                let attribute = try self.name()
                skipWhitespace()
                guard !atEnd, bytes[index] == UInt8(ascii: "=") else { throw fail("expected '=' in tag <\(string(name))>") }
                advance()
                skipWhitespace()
                guard !atEnd, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                    throw fail("expected a quoted attribute value in <\(string(name))>")
                }
                let quote = bytes[index]
                advance()
                let valueStart = index
                while !atEnd, bytes[index] != quote { advance() }
                guard !atEnd else { throw fail("unterminated attribute in <\(string(name))>") }
                attributes.append(MiniXMLDocument.Attribute(name: attribute, value: Int32(valueStart)..<Int32(index)))
                elements[Int(me)].attributeCount += 1
                advance()
            }
            while true {
                guard !atEnd else { throw fail("element <\(string(name))> is not closed") }
                if bytes[index] != UInt8(ascii: "<") {
                    let start = index
                    // Text is most of a cascade's bytes: memchr finds its end many bytes at a time.
                    let base = UnsafeRawPointer(bytes.baseAddress!)
                    if let markup = memchr(base + index, Int32(UInt8(ascii: "<")), bytes.count - index) {
                        index = UnsafeRawPointer(markup) - base
                    } else {
                        index = bytes.count
                    }
                    let run = Int32(textRuns.count)
                    textRuns.append(MiniXMLDocument.TextRun(bytes: Int32(start)..<Int32(index)))
                    if lastText == MiniXMLDocument.none { elements[Int(me)].firstText = run } else { textRuns[Int(lastText)].next = run }
                    lastText = run
                } else if starts(with: "</") {
                    index += 2
                    let closing = try self.name()
                    guard bytes[closing.offsets].elementsEqual(bytes[name.offsets]) else {
                        throw fail("</\(string(closing))> closes <\(string(name))>")
                    }
                    skipWhitespace()
                    guard !atEnd, bytes[index] == UInt8(ascii: ">") else { throw fail("expected '>' after </\(string(closing))") }
                    advance()
                    return me
                } else if starts(with: "<!--") {
                    try skip(past: "-->")
                } else {
                    let child = try element(depth: depth + 1)
                    if lastChild == MiniXMLDocument.none { elements[Int(me)].firstChild = child } else { elements[Int(lastChild)].nextSibling = child }
                    lastChild = child
                    elements[Int(me)].childCount += 1
                }
            }
        }
    }
}
