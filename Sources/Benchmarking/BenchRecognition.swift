import CoreAffinity
import FaceRecognition
import TextOutput
import Video

/// `sentry bench --recognition`: dlib's ResNet on the project's interpreter against dlib's own C++.
extension Bench {
    /// The network alone on one of dlib's chips (the fixtures'), in turns on one core with
    /// dlib's Python package (tools/dlib_reference.py), as BlazeFace's and the mesh's are timed.
    public static func recognitionReport(tools: String?, profile: Bool) throws {
        let embedder = try FaceEmbedder.installed()
        let chipPath = (tools.map { $0 + "/.." } ?? ".") + "/Tests/Fixtures/dlib-chips/photos-astronaut-colour-0.png"
        guard let chip = PNGReading.rgb(path: chipPath), chip.width == FaceChip.size, chip.height == FaceChip.size else {
            print("  face recognition: skipped (no chip at \(chipPath); run from the repository)")
            return
        }
        _ = embedder.embedding(ofChip: chip.pixels)
        if profile { printProfile(embedder.stepTimings(runs: 10)) }
        guard let tools, let reference = ReferenceProcess(["\(tools)/dlib_reference.py", "bench", "--turns", "--runs", "3"]),
            reference.readLine() != nil
        else {
            print("  face recognition \(Stats(seconds: embedder.networkSeconds(runs: 20))); dlib reference: skipped (run tools/setup)")
            return
        }
        let coresBefore = Self.shareCore(with: reference.processIdentifier)
        defer { coresBefore?.allow() }
        let runs = 5
        let turns = Self.takeTurns(with: reference, request: "run \(runs)") { embedder.networkSeconds(runs: runs) }
        _ = reference.finish()
        guard !turns.ours.isEmpty, !turns.theirs.isEmpty else { return }
        let (sentry, dlib) = (Stats(seconds: turns.ours), Stats(seconds: turns.theirs))
        print("  face recognition network \(sentry), dlib \(dlib) (one thread, \(turns.ratios.count) turns of \(runs), one core)")
        print(
            String(
                printf: "  ratio sentry/dlib: median %.2fx, turn by turn %.2fx, fastest %.2fx (%.1f against %.1f ms)",
                sentry.median / dlib.median, Stats.median(turns.ratios), sentry.fastest / dlib.fastest, sentry.fastest, dlib.fastest))
    }
}
