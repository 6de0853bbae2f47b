import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A directory of one test's own under the temporary directory, removed with all it
/// holds when the test lets go of it: tests work on real files and leave none behind.
public final class ScratchDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    /// `label` goes into the directory's name (`sentry-LABEL-UUID`), for whoever finds
    /// one that a crashed run left.
    public init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sentry-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Where `name` is, or goes, in the directory.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// `contents` written to `name` in the directory: its path.
    public func write(_ contents: String, to name: String) throws -> String {
        let file = file(name)
        try contents.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A directory for files that the tests of one process make once and share (the
    /// demo clip, the scenes, the bad inputs), removed when the process exits.
    public static let shared: URL = {
        let url = sharedURL()
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: ScratchDirectory.sharedURL()) }
        return url
    }()

    /// The folder `name` in `shared`, made if it is not there yet.
    public static func sharedFolder(_ name: String) -> URL {
        let url = shared.appendingPathComponent(name)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static func sharedURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("sentry-tests-\(getpid())")
    }
}
