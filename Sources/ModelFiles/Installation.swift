import FoundationEssentials

/// Where sentry's own files are, found from where the running binary is:
/// an install (`<prefix>/bin/sentry` beside `<prefix>/share/sentry`) or the
/// checkout it was built in (`.build/<triple>/<config>/sentry`).
public enum Installation {
    /// The directory of the running executable, symlinks resolved.
    public static var executableDirectory: URL? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map {
            URL(fileURLWithPath: $0).deletingLastPathComponent()
        }
    }

    /// `<prefix>/share/sentry`, for a binary at `<prefix>/bin/sentry`.
    public static var shareDirectory: String? {
        executableDirectory?.deletingLastPathComponent().appendingPathComponent("share/sentry").path
    }

    /// The checkout the binary was built in: the nearest folder above it
    /// with sentry's `Package.swift` (a test bundle sits a level deeper).
    public static var checkout: String? {
        var folder = executableDirectory
        for _ in 0..<6 {
            guard let current = folder else { return nil }
            if FileManager.default.fileExists(atPath: current.appendingPathComponent("Package.swift").path),
                FileManager.default.fileExists(atPath: current.appendingPathComponent("firmware").path)
            {
                return current.path
            }
            folder = current.deletingLastPathComponent()
        }
        return nil
    }
}
