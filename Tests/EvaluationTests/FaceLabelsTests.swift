import Evaluation
import Geometry
import ModelFiles
import Scratch
import Testing

@Suite("Label files for sentry eval")
struct FaceLabelsTests {
    /// `text` read as the label file `name`.
    func labels(_ name: String, _ text: String) throws(LabelError) -> FaceLabels { try FaceLabels(bytes: Array(text.utf8), path: name) }

    @Test("imglab XML: boxes, ignored boxes and images without faces")
    func imglab() throws {
        let labels = try labels(
                "a.xml",
                """
                <?xml version='1.0'?><dataset><name>x</name><images>
                <image file='a.jpg'><box top='1' left='2' width='30' height='40'/><box top='5' left='6' width='7' height='8' ignore='1'/></image>
                <image file='b.jpg'/>
                </images></dataset>
                """)
        #expect(labels.images.map(\.file) == ["a.jpg", "b.jpg"])
        #expect(labels.images[0].faces == [Box(x: 2, y: 1, width: 30, height: 40)])
        #expect(labels.images[0].ignored == [Box(x: 6, y: 5, width: 7, height: 8)])
        #expect(labels.images[1].faces.isEmpty)
    }

    @Test("text lines: FILE then x y width height per face, comments, blank lines")
    func plain() throws {
        let labels = try labels("a.txt", "# faces\na.png 1 2 3 4 10 20 30 40\n\nempty.png\n")
        #expect(labels.images.count == 2)
        #expect(labels.images[0].faces == [Box(x: 1, y: 2, width: 3, height: 4), Box(x: 10, y: 20, width: 30, height: 40)])
    }

    @Test(
        "bad label files are one-line errors naming the file",
        arguments: [
            ("short.txt", "a.png 1 2 3\n", "line 1: expected FILE then x y width height"),
            ("flat.txt", "a.png 1 2 0 4\n", "line 1: a face has no area"),
            ("broken.xml", "<dataset><images><image file='a.jpg'>", "not well-formed XML"),
            ("other.xml", "<opencv_storage/>", "not an imglab dataset"),
            ("nobox.xml", "<dataset><images><image file='a.jpg'><box top='x'/></image></images></dataset>", "lacks whole-number"),
            ("empty.txt", "# nothing\n", "lists no images"),
        ])
    func errors(name: String, text: String, words: String) throws {
        let error = #expect(throws: LabelError.self) { try labels(name, text) }
        #expect(error?.description.hasPrefix("labels \(name): ") == true)
        #expect(error?.description.contains(words) == true, "\(error?.description ?? "")")
    }
}

@Suite("Data files read at the edge: bytes, or one reason")
struct FileContentsTests {
    @Test("a file's bytes; a missing file, a folder, an unreadable device and one past the limit each say why")
    func reasons() throws {
        let scratch = try ScratchDirectory("files")
        let path = try scratch.write("a.png 1 2 3 4\n", to: "labels.txt")
        #expect(try FileContents.read(path, atMost: 1 << 20) == Array("a.png 1 2 3 4\n".utf8))
        let failures: [(String, Int, String)] = [
            ("/nonexistent/labels.txt", 1 << 20, "no such file"), (scratch.path, 1 << 20, "it is a directory"),
            ("/dev/zero", 1 << 20, "it is larger than 1 MB"), ("/proc/self/mem", 1 << 20, "cannot read it"),
        ]
        for (path, limit, reason) in failures {
            let error = #expect(throws: FileReadError.self) { try FileContents.read(path, atMost: limit) }
            #expect(error?.path == path && error?.reason.hasPrefix(reason) == true, "\(path): \(String(describing: error))")
        }
    }
}
