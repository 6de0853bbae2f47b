import Foundation
import Serial
import Testing

#if canImport(Glibc)
    import Glibc
    import TestClips
#endif

@Suite("Bad input as an unprivileged user: permissions")
struct PermissionTests {
    /// Runs sentry as `nobody` when the tests run as root (as in CI), else as is.
    func runUnprivileged(_ arguments: [String]) throws -> SentryProcess {
        getuid() == 0
            ? try SentryProcess(
                program: "/usr/bin/setpriv",
                ["--reuid=65534", "--regid=65534", "--clear-groups", SentryProcess.executable] + arguments)
            : try SentryProcess(arguments)
    }

    func lockedFile(_ name: String, copying source: String) throws -> String {
        let path = BadFiles.directory.appendingPathComponent(name).path
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: source, toPath: path)
        chmod(path, 0)
        chmod(BadFiles.directory.path, 0o755)
        return path
    }

    @Test("a serial port without permission names the dialout group")
    func serialPermission() throws {
        let pty = try PseudoTerminal()
        chmod(pty.devicePath, 0o600)
        let run = try runUnprivileged(["--camera", DemoClip.path, "--serial", pty.devicePath])
        #expect(run.status == 1)
        #expect(run.standardError.contains("serial port \(pty.devicePath): permission denied"), "\(run.standardError)")
        #expect(run.standardError.contains("dialout"))
    }

    @Test("an unreadable camera file says so")
    func cameraPermission() throws {
        let clip = try lockedFile("locked.y4m", copying: DemoClip.path)
        let run = try runUnprivileged(["--camera", clip, "--serial", "sim"])
        #expect(run.status == 1)
        #expect(run.standardError.contains("camera \(clip): permission denied"), "\(run.standardError)")
    }

    @Test("an unreadable cascade says so")
    func cascadePermission() throws {
        let cascade = try lockedFile("locked.xml", copying: "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml")
        let run = try runUnprivileged(["--camera", DemoClip.path, "--serial", "sim", "--cascade", cascade])
        #expect(run.status == 1)
        #expect(run.standardError.contains("cascade \(cascade): cannot read it"), "\(run.standardError)")
    }
}
