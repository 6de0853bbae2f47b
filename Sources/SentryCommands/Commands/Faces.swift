import ArgumentParser
import FoundationEssentials
import PhotoFaces
import SentryApp
import TextOutput

struct Faces: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read the faces in photos: landmarks, expressions, head pose and gaze.",
        discussion: """
            One line per image, in the order given. With --json, one JSON object per line: \
            {"file", "width", "height", "faces": [{"box": [x, y, w, h], "score", "landmarks": 478 × [x, y, z], \
            "expressions", "states", "pose": {"yaw", "pitch", "roll"}, "gaze": {"left", "right"}, "measures"}]}. \
            An image without a face is not an error.
            """
    )

    @Flag(help: "Print one JSON object per image.")
    var json = false

    @Option(help: ArgumentHelp("Also write each image with what was read drawn on it, as a PNG in this folder.", valueName: "dir"))
    var draw: String?

    @Argument(help: ArgumentHelp("Photos (JPEG, PNG, or any picture ffmpeg reads).", valueName: "image"))
    var images: [String]

    func validate() throws {
        guard !images.isEmpty else { throw ValidationError("name at least one image: sentry faces photo.jpg") }
        if let draw {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: draw, isDirectory: &isDirectory), isDirectory else {
                throw ValidationError("--draw \(draw) is not a folder; create it first (mkdir -p \(draw))")
            }
        }
    }

    func run() throws {
        let reader = try failingCleanly { try FaceReader() }
        var failed = false
        for path in images {
            do {
                let (report, image) = try reader.read(path: path)
                print(json ? FaceReportText.json(report) : FaceReportText.line(report))
                if let draw { try FaceDrawing.write(report, over: image, into: draw) }
            } catch let error as CustomStringConvertible & Error {
                StandardStream.writeError("sentry: \(error.description)\n")
                failed = true
            }
        }
        if failed { throw ExitCode.failure }
    }
}
