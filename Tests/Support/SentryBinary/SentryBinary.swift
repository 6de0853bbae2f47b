import Foundation

/// The `sentry` binary the tests run as a user does. `make test` and `make check`
/// point `SENTRY_TEST_BINARY` at the release build that is installed and packaged:
/// the binary users get is the one tested, and it starts in a tenth of the time of the
/// debug build (whose argument parsing alone takes 0.3 s of CPU), which hundreds of
/// runs in the suite pay. Without it (`swift test` alone) the tests run the debug
/// build beside them.
public enum SentryBinary {
    public static let path: String = {
        if let chosen = ProcessInfo.processInfo.environment["SENTRY_TEST_BINARY"], !chosen.isEmpty {
            return URL(fileURLWithPath: chosen).standardizedFileURL.path
        }
        return Bundle.main.bundleURL.appendingPathComponent("sentry").path
    }()
}
