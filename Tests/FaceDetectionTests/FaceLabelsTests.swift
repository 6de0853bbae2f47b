import FaceDetection
import Foundation
import Geometry
import Scratch
import Testing

@Suite("Label files for sentry eval")
struct FaceLabelsTests {
    let scratch: ScratchDirectory

    init() throws { scratch = try ScratchDirectory("labels") }

    func file(_ name: String, _ text: String) throws -> String { try scratch.write(text, to: name) }

    @Test("imglab XML: boxes, ignored boxes and images without faces")
    func imglab() throws {
        let labels = try FaceLabels(
            contentsOfFile: try file(
                "a.xml",
                """
                <?xml version='1.0'?><dataset><name>x</name><images>
                <image file='a.jpg'><box top='1' left='2' width='30' height='40'/><box top='5' left='6' width='7' height='8' ignore='1'/></image>
                <image file='b.jpg'/>
                </images></dataset>
                """))
        #expect(labels.images.map(\.file) == ["a.jpg", "b.jpg"])
        #expect(labels.images[0].faces == [Box(x: 2, y: 1, width: 30, height: 40)])
        #expect(labels.images[0].ignored == [Box(x: 6, y: 5, width: 7, height: 8)])
        #expect(labels.images[1].faces.isEmpty)
    }

    @Test("text lines: FILE then x y width height per face, comments, blank lines")
    func plain() throws {
        let labels = try FaceLabels(contentsOfFile: try file("a.txt", "# faces\na.png 1 2 3 4 10 20 30 40\n\nempty.png\n"))
        #expect(labels.images.count == 2)
        #expect(labels.images[0].faces == [Box(x: 1, y: 2, width: 3, height: 4), Box(x: 10, y: 20, width: 30, height: 40)])
    }

    @Test(
        "bad label files are one-line errors naming the file",
        arguments: [
            ("missing", nil, "no such file"),
            ("short.txt", "a.png 1 2 3\n", "line 1: expected FILE then x y width height"),
            ("flat.txt", "a.png 1 2 0 4\n", "line 1: a face has no area"),
            ("broken.xml", "<dataset><images><image file='a.jpg'>", "not well-formed XML"),
            ("other.xml", "<opencv_storage/>", "not an imglab dataset"),
            ("nobox.xml", "<dataset><images><image file='a.jpg'><box top='x'/></image></images></dataset>", "lacks whole-number"),
            ("empty.txt", "# nothing\n", "lists no images"),
        ] as [(String, String?, String)])
    func errors(name: String, text: String?, words: String) throws {
        let path = try text.map { try file(name, $0) } ?? "/nonexistent/labels.xml"
        let error = #expect(throws: LabelError.self) { try FaceLabels(contentsOfFile: path) }
        #expect(error?.description.hasPrefix("labels \(path): ") == true)
        #expect(error?.description.contains(words) == true, "\(error?.description ?? "")")
    }
}
