import MiniXML
import Testing
@testable import FaceDetection

@Suite("The XML reader: elements, attributes and text as written, with the line of any error")
struct MiniXMLTests {
    static func parse(_ text: String) throws(XMLSyntaxError) -> MiniXMLElement { try MiniXML.parse(Array(text.utf8)).root }

    @Test("children come in document order; child(_:) finds the first of a name")
    func children() throws {
        let root = try Self.parse("<?xml version='1.0'?><!-- c --><r><a>1</a><b/><a>2</a><!-- d --><c><a>3</a></c></r>")
        #expect(root.name == "r")
        #expect(root.children.map(\.name) == ["a", "b", "a", "c"])
        #expect(root.children.count == 4)
        #expect(root.child("a")?.text == "1")
        #expect(root.child("c")?.child("a")?.text == "3")
        #expect(root.child("b")?.children.isEmpty == true)
        #expect(root.child("d") == nil)
    }

    @Test("an element's text is its runs joined, without its children's text or comments")
    func text() throws {
        let root = try Self.parse("<r> one <x>inner</x>two<!-- not text -->three </r>")
        #expect(root.text == " one twothree ")
        #expect(try Self.parse("<r/>").text == "")
        #expect(try Self.parse("<r></r>").text == "")
    }

    @Test("attributes are read as written, in either quotes; a repeated one counts once, the last")
    func attributes() throws {
        let root = try Self.parse(#"<r><image file='a b.jpg' n="1" n="2"/><image/></r>"#)
        let image = try #require(root.children.first)
        #expect(image.attribute("file") == "a b.jpg")
        #expect(image.attribute("n") == "2")
        #expect(image.attribute("missing") == nil)
        #expect(root.children.map { $0.attribute("file") } == ["a b.jpg", nil])
    }

    @Test("a number split by a comment is read joined, as OpenCV's reader would")
    func numberAcrossComment() throws {
        let cascade = try HaarCascade(xml: CascadeFileTests.cascade(threshold: "0.<!-- a comment -->5 <!-- -->"))
        #expect(cascade.stages.first?.trees.first?.nodes.first?.threshold == 0.5)
    }

    @Test(
        "malformed documents are refused with the line of the fault",
        arguments: [
            ("<r>\n<a>\n</b></r>", "line 3: </b> closes <a>"),
            ("<r>\n<a>", "line 2: element <a> is not closed"),
            ("", "line 1: no root element (empty or not XML)"),
            ("<r/>\n<s/>", "line 2: content after the root element"),
            ("<r a=1/>", "line 1: expected a quoted attribute value in <r>"),
            ("text", "line 1: expected '<' at the start of the document"),
        ])
    func malformed(text: String, message: String) {
        let error = #expect(throws: XMLSyntaxError.self) { try Self.parse(text) }
        #expect(error?.description == message)
    }

    @Test("nesting is bounded, so a hostile file cannot exhaust the stack")
    func deepNesting() {
        let deep = String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100)
        let error = #expect(throws: XMLSyntaxError.self) { try Self.parse(deep) }
        #expect(error?.reason == "elements nested too deeply")
    }
}
