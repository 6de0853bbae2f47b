import ArgumentParser
import Benchmarking
import SentryApp

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Recall, precision and F1 of a detector against human-labelled faces.",
        discussion: """
            Labels: dlib's imglab XML (<image file='a.jpg'><box top left width height/>, ignore='1' \
            for faces that may be missed), or text lines 'FILE x y width height [x y width height ...]'.
            """
    )

    @Option(help: "Folder of the labelled images (paths in the labels are relative to it).")
    var images: String

    @Option(help: "Label file: imglab XML or text lines 'FILE x y w h ...'.")
    var labels: String

    @OptionGroup var detection: DetectionOptions

    func run() throws {
        let report = try failingCleanly { try DetectorEvaluation.run(images: images, labels: labels, detector: detection.options) }
        print(report.description)
    }
}
