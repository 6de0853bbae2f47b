import MonotonicTime
import Foundation
import Serial
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("termios serial port over real pseudo-terminals")
struct SerialPortTests {
    func settings(of path: String) throws -> termios {
        let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        try #require(fd >= 0)
        defer { close(fd) }
        var t = termios()
        try #require(tcgetattr(fd, &t) == 0)
        return t
    }

    @Test("bytes written arrive unchanged on the other side")
    func bytesArrive() throws {
        let pty = try PseudoTerminal()
        let port = try SerialPort(path: pty.devicePath)
        let message = Array("X90.Y45.L\n\r\u{0}\u{FF}".utf8)
        #expect(try port.write(message) == message.count)
        var received: [UInt8] = []
        while received.count < message.count {
            let chunk = pty.read(timeout: 1)
            if chunk.isEmpty { break }
            received += chunk
        }
        #expect(received == message)
    }

    @Test("a hang-up is noticed without writing anything")
    func hangUpWhileIdle() throws {
        let pty = try PseudoTerminal()
        let port = try SerialPort(path: pty.devicePath)
        try port.checkConnected()
        pty.close()
        #expect(throws: SerialError.self) { try port.checkConnected() }
    }

    @Test("the line is raw 8N1 at the requested speed, without hang-up on close")
    func rawMode() throws {
        let pty = try PseudoTerminal()
        let port = try SerialPort(path: pty.devicePath, baudRate: 115200)
        defer { port.close() }
        var t = termios()
        try #require(tcgetattr(try #require(port.descriptor).rawValue, &t) == 0)
        #expect(t.c_cflag & tcflag_t(CSIZE) == tcflag_t(CS8))
        #expect(t.c_cflag & tcflag_t(PARENB | CSTOPB | HUPCL) == 0)
        #expect(t.c_lflag & tcflag_t(ICANON | ECHO | ISIG) == 0)
        #expect(t.c_oflag & tcflag_t(OPOST) == 0)
        #expect(cfgetospeed(&t) == speed_t(B115200))
    }

    @Test("the original line settings come back on close")
    func restoresSettings() throws {
        let pty = try PseudoTerminal()
        // Start from a cooked line, as a freshly plugged device would have.
        var cooked = try settings(of: pty.devicePath)
        cooked.c_lflag |= tcflag_t(ICANON | ECHO)
        cooked.c_cflag |= tcflag_t(HUPCL)
        cfsetospeed(&cooked, speed_t(B2400))
        try #require(tcsetattr(pty.device!.rawValue, TCSANOW, &cooked) == 0)
        let before = try settings(of: pty.devicePath)
        let port = try SerialPort(path: pty.devicePath)
        #expect(try settings(of: pty.devicePath).c_lflag != before.c_lflag)
        port.close()
        let after = try settings(of: pty.devicePath)
        #expect(after.c_lflag == before.c_lflag && after.c_cflag == before.c_cflag)
        #expect(after.c_iflag == before.c_iflag && after.c_oflag == before.c_oflag)
    }

    @Test("a second open of the same port says it is in use")
    func exclusive() throws {
        let pty = try PseudoTerminal()
        let first = try SerialPort(path: pty.devicePath)
        defer { first.close() }
        let error = #expect(throws: SerialError.self) { try SerialPort(path: pty.devicePath) }
        #expect(error?.kind == .busy)
        #expect(error?.description.contains("port \(pty.devicePath) is in use by another program") == true)
    }

    @Test("a full port takes no more bytes and never blocks")
    func fullPortDoesNotBlock() throws {
        let pty = try PseudoTerminal()
        let port = try SerialPort(path: pty.devicePath)
        let chunk = [UInt8](repeating: UInt8(ascii: "L"), count: 4096)
        var total = 0, zeroWrites = 0
        let start = monotonicSeconds()
        while zeroWrites < 3, monotonicSeconds() - start < 5 {
            let n = try port.write(chunk)
            total += n
            zeroWrites += n == 0 ? 1 : 0
        }
        #expect(zeroWrites == 3, "the port never filled up after \(total) bytes")
        #expect(total > 0)
    }

    @Test(
        "bad paths give one-line errors that name the path and the fix",
        arguments: [
            ("/dev/does-not-exist-ttyACM9", SerialError.Kind.notFound, "plug in the Arduino"),
            ("/etc/hostname", .notATerminal, "not a serial port"),
            ("/tmp", .notATerminal, "is a directory"),
        ])
    func badPaths(path: String, kind: SerialError.Kind, words: String) {
        let error = #expect(throws: SerialError.self) { try SerialPort(path: path) }
        #expect(error?.kind == kind)
        #expect(error?.description.contains(path) == true)
        #expect(error?.description.contains(words) == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("\n") == false)
    }

    @Test("an unsupported baud rate is refused before anything is opened")
    func badBaud() {
        let error = #expect(throws: SerialError.self) { try SerialPort(path: "/dev/null", baudRate: 12345) }
        #expect(error?.kind == .unsupportedBaudRate)
        #expect(error?.description.contains("9600") == true)
    }
}
