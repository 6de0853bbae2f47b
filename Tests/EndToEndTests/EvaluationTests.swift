import Foundation
import TestClips
import Testing

@Suite("sentry eval against human-labelled faces")
struct EvaluationTests {
    /// The fixture photos with hand-drawn boxes (Tests/Fixtures/eval/labels.xml).
    static let photos = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos").path
    static let labels = DemoClip.repository.appendingPathComponent("Tests/Fixtures/eval/labels.xml").path

    @Test(
        "scores each detector as tools/eval_reference.py scores OpenCV and LiteRT on the same labels",
        arguments: [
            // Figures from `tools/eval_reference.py --detector litert-blazeface|litert-blazeface-short|opencv-haar|opencv-lbp`.
            ("blazeface", "IoU >= 0.5: recall 0.333  precision 0.500  F1 0.400  (found 1, missed 2, false 1)"),
            ("blazeface-short", "IoU >= 0.5: recall 0.667  precision 1.000  F1 0.800  (found 2, missed 1, false 0)"),
            ("haar", "IoU >= 0.5: recall 0.667  precision 0.667  F1 0.667  (found 2, missed 1, false 1)"),
            ("lbp", "IoU >= 0.5: recall 0.333  precision 1.000  F1 0.500  (found 1, missed 2, false 0)"),
        ])
    func scores(detector: String, expected: String) throws {
        let run = try SentryProcess(["eval", "--images", Self.photos, "--labels", Self.labels, "--detector", detector])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("5 images, 3 labelled faces, detector \(detector)"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains(expected), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("IoU >= 0.3:"))
    }
}
