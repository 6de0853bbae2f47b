import Foundation
import Serial
import Testing

#if canImport(Glibc)
    import Glibc
    import TestClips
#endif

@Suite("Signals stop sentry cleanly")
struct SignalTests {
    func lineSettings(_ fd: Int32) -> [UInt32] {
        var t = termios()
        tcgetattr(fd, &t)
        return [t.c_iflag, t.c_oflag, t.c_cflag, t.c_lflag, cfgetospeed(&t)]
    }

    @Test("SIGTERM and SIGINT during a run restore the port's settings and leave the turret still (--on-exit hold)", arguments: [SIGTERM, SIGINT])
    func restoresOnSignal(signal: Int32) throws {
        let pty = try PseudoTerminal()
        var cooked = termios()
        tcgetattr(pty.device!.rawValue, &cooked)
        cooked.c_lflag |= tcflag_t(ICANON | ECHO)
        cfsetospeed(&cooked, speed_t(B4800))
        tcsetattr(pty.device!.rawValue, TCSANOW, &cooked)
        let before = lineSettings(pty.device!.rawValue)

        let sentry = try RunningSentry(["--camera", DemoClip.path, "--serial", pty.devicePath, "--realtime", "--quiet"])
        let process = sentry.process
        var received = collect(pty, timeout: 10) { !$0.isEmpty }
        #expect(!received.isEmpty, "sentry never wrote to the port")
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        while case let more = pty.read(timeout: 0.2), !more.isEmpty { received += more }

        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        #expect(lineSettings(pty.device!.rawValue) == before)
        // The parting command (--on-exit hold): the turret stands still, as an X or nothing at all, never L.
        #expect(received.last == UInt8(ascii: "."), "\(String(decoding: received.suffix(20), as: UTF8.self))")
    }
}
