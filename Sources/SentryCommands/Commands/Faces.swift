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
            "expressions", "states", "pose": {"yaw", "pitch", "roll"}, "gaze": {"left", "right"}, "measures"}]}; \
            with --known, each face also has "name" (null for a stranger) and "distance" (to the nearest known face). \
            An image without a face is not an error.
            """
    )

    @Flag(help: "Print one JSON object per image.")
    var json = false

    @Option(help: ArgumentHelp("Also write each image with what was read drawn on it, as a PNG in this folder (made if it is not there).", valueName: "dir"))
    var draw: String?

    @Option(help: ArgumentHelp("Name each face after the household's photos: a folder per person holding their photos (DIR/alice/1.jpg); see sentry known.", valueName: "dir"))
    var known: String?

    @OptionGroup(title: "Detection (as run finds faces; --detect-fps is for videos)") var detection: DetectionOptions

    @Argument(help: ArgumentHelp("Photos (JPEG, PNG, or any picture ffmpeg reads).", valueName: "image"))
    var images: [String]

    func validate() throws {
        guard !images.isEmpty else { throw ValidationError("name at least one image: sentry faces photo.jpg") }
        if let draw, draw.isEmpty { throw ValidationError("--draw needs a folder, e.g. --draw out/") }
    }

    func run() throws {
        if let draw {
            // Made as mkdir -p would; a file in the way or a folder that cannot be made is one line.
            do {
                try FileManager.default.createDirectory(atPath: draw, withIntermediateDirectories: true)
            } catch {
                var isFolder = false
                let exists = FileManager.default.fileExists(atPath: draw, isDirectory: &isFolder)
                StandardStream.writeError("sentry: --draw \(draw): \(exists && !isFolder ? "a file is in the way; pass a folder" : "cannot be made; pass a folder you may write")\n")
                throw ExitCode.validationFailure
            }
        }
        let reader = try failingCleanly {
            known == nil ? try FaceReader(detector: detection.options) : try Recognising.reader(detector: detection.options, known: known).reader
        }
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
