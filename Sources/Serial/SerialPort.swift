#if canImport(Glibc)
    import Glibc
#endif
import MonotonicTime
import SystemPackage

/// A serial port in raw 8N1 mode (SPEC §5), opened non-blocking and
/// exclusively. The original line settings come back on `close()`.
public final class SerialPort {
    /// Baud rates the port accepts, with their termios constants.
    public static let baudRates: [Int: speed_t] = [
        1200: speed_t(B1200), 2400: speed_t(B2400), 4800: speed_t(B4800), 9600: speed_t(B9600),
        19200: speed_t(B19200), 38400: speed_t(B38400), 57600: speed_t(B57600),
        115200: speed_t(B115200), 230400: speed_t(B230400), 460800: speed_t(B460800),
        500000: speed_t(B500000), 1000000: speed_t(B1000000), 2000000: speed_t(B2000000),
    ]

    public let path: String
    public let baudRate: Int
    /// The open port; nil once closed.
    public private(set) var descriptor: FileDescriptor?
    private var original: termios

    /// Opens `path` with `O_NOCTTY | O_NONBLOCK | O_CLOEXEC`, takes an
    /// exclusive `flock` then `TIOCEXCL`, and switches the line to raw 8N1 at
    /// `baudRate` without hang-up on close (so closing does not reset an Uno).
    public init(path: String, baudRate: Int = 9600) throws(SerialError) {
        self.path = path
        self.baudRate = baudRate
        guard let speed = Self.baudRates[baudRate] else {
            throw SerialError(
                .unsupportedBaudRate, path: path, reason: "baud rate \(baudRate) is not supported",
                hint: "use one of \(Self.baudRates.keys.sorted().map(String.init).joined(separator: ", "))")
        }
        let port: FileDescriptor
        do {
            port = try FileDescriptor.open(path, .readWrite, options: [.nonBlocking, .closeOnExec, Self.noControllingTerminal])
        } catch {
            throw Self.openError(path: path, errno: error as? Errno ?? .ioError)
        }
        var keepOpen = false
        defer { if !keepOpen { try? port.close() } }
        let fd = port.rawValue

        guard isatty(fd) == 1 else {
            throw SerialError(
                .notATerminal, path: path, reason: "not a serial port (not a tty)",
                hint: "pass the Arduino's port, e.g. /dev/ttyACM0 or /dev/ttyUSB0, or 'sim'")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            throw SerialError(
                .busy, path: path, reason: "port \(path) is in use by another program",
                hint: "close the other program (another sentry, a serial monitor) and try again")
        }
        guard ioctl(fd, UInt(TIOCEXCL)) == 0 else {
            throw SerialError(
                .busy, path: path, reason: "port \(path) is in use by another program (TIOCEXCL: \(String(cString: strerror(errno))))",
                hint: "close the other program and try again")
        }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else {
            throw SerialError(
                .notATerminal, path: path, reason: "cannot read line settings (\(String(cString: strerror(errno))))",
                hint: "pass a serial port such as /dev/ttyACM0")
        }
        var raw = saved
        cfmakeraw(&raw)
        raw.c_cflag &= ~(tcflag_t(CSIZE | PARENB | CSTOPB | HUPCL) | tcflag_t(CRTSCTS))
        raw.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        raw.c_iflag &= ~tcflag_t(IXON | IXOFF | IXANY)
        raw.c_cc.6 = 0  // VMIN
        raw.c_cc.5 = 0  // VTIME
        cfsetispeed(&raw, speed)
        cfsetospeed(&raw, speed)
        var confirmed = termios()
        guard tcsetattr(fd, TCSANOW, &raw) == 0, tcgetattr(fd, &confirmed) == 0, Self.sameSettings(raw, confirmed) else {
            tcsetattr(fd, TCSANOW, &saved)
            throw SerialError(
                .settingsRejected, path: path, reason: "the driver did not accept raw 8N1 at \(baudRate) baud",
                hint: "try another --baud or another USB serial adapter")
        }
        descriptor = port
        original = saved
        keepOpen = true
    }

    /// `O_NOCTTY`: opening the port must not make it sentry's controlling terminal.
    private static let noControllingTerminal = FileDescriptor.OpenOptions(rawValue: O_NOCTTY)

    /// The open port, or the error every operation on a closed one gives.
    private func openPort() throws(SerialError) -> FileDescriptor {
        guard let descriptor else { throw disconnected("port is closed") }
        return descriptor
    }

    deinit { close() }

    /// Writes as much of `bytes` as the port takes now, without blocking.
    /// Returns how many bytes went out (0 when the port is full).
    public func write(_ bytes: [UInt8]) throws(SerialError) -> Int {
        let port = try openPort()
        var pollfd = Glibc.pollfd(fd: port.rawValue, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&pollfd, 1, 0)
        if ready < 0 {
            // Interrupted: nothing written, the next call tries again; any other failure is a port we cannot use.
            guard errno == EINTR else { throw disconnected("poll failed (\(Errno(rawValue: errno)))") }
            return 0
        }
        if pollfd.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { throw disconnected("device hung up") }
        guard pollfd.revents & Int16(POLLOUT) != 0, !bytes.isEmpty else { return 0 }
        do {
            return try bytes.withUnsafeBytes { try port.write($0) }
        } catch let error as Errno where error == .resourceTemporarilyUnavailable {
            return 0
        } catch let error as Errno where Self.deviceGone.contains(error) || error == .brokenPipe {
            throw disconnected("device is gone (\(error))")
        } catch {
            throw SerialError(.other, path: path, reason: "write failed (\(error))", hint: "check the cable and the port")
        }
    }

    /// Throws when the device has hung up (unplugged, or the other side of a
    /// pty closed), without reading or writing: so a replug while nothing is
    /// being written is noticed too.
    public func checkConnected() throws(SerialError) {
        var pollfd = Glibc.pollfd(fd: try openPort().rawValue, events: 0, revents: 0)
        if poll(&pollfd, 1, 0) > 0, pollfd.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
            throw disconnected("device hung up")
        }
    }

    /// Reads what the device sent, without blocking (empty when nothing came).
    public func read() throws(SerialError) -> [UInt8] {
        let port = try openPort()
        var buffer = [UInt8](repeating: 0, count: 256)
        do {
            let count = try buffer.withUnsafeMutableBytes { try port.read(into: $0) }
            return Array(buffer[0..<count])
        } catch let error as Errno where Self.deviceGone.contains(error) {
            throw disconnected("device is gone (\(error))")
        } catch {
            return []  // nothing there yet (EAGAIN), or interrupted: the next read tries again
        }
    }

    /// True for the slave side of a pseudo-terminal (a simulator, not a board
    /// that resets when the port opens).
    public var isPseudoTerminal: Bool {
        var info = stat()
        guard let descriptor, fstat(descriptor.rawValue, &info) == 0 else { return false }
        // Unix98 pty slaves use character majors 136-143.
        let major = (info.st_rdev >> 8) & 0xFFF
        return (136...143).contains(major)
    }

    /// What `wait(until:timeout:)` waits for.
    public enum Readiness: Sendable {
        /// Bytes to read (or a hang-up).
        case readable
        /// Room for more bytes (or a hang-up).
        case writable
    }

    /// Sleeps until the port is `readiness` or hangs up, or `timeout` seconds pass.
    public func wait(until readiness: Readiness, timeout: Double) {
        guard let descriptor, timeout > 0 else { return }
        var pollfd = Glibc.pollfd(fd: descriptor.rawValue, events: Int16(readiness == .readable ? POLLIN : POLLOUT), revents: 0)
        _ = poll(&pollfd, 1, Int32((timeout * 1000).rounded(.up)))
    }

    /// Waits up to `timeout` seconds for everything written to leave the port.
    /// The kernel offers no wait with a limit (`tcdrain` may block for ever on a
    /// stalled adapter), so the output queue is looked at every millisecond; this
    /// runs only at exit and at a replug.
    public func drain(timeout: Double) {
        guard let descriptor else { return }
        let deadline = monotonicSeconds() + timeout
        var pending: Int32 = 0
        while ioctl(descriptor.rawValue, UInt(TIOCOUTQ), &pending) == 0, pending > 0, monotonicSeconds() < deadline {
            usleep(1000)
        }
    }

    /// Restores the original line settings and closes the port. Idempotent.
    public func close() {
        guard let descriptor else { return }
        tcsetattr(descriptor.rawValue, TCSANOW, &original)
        try? descriptor.close()
        self.descriptor = nil
    }

    /// What reading or writing a port whose device was unplugged gives.
    private static let deviceGone: [Errno] = [.ioError, .noSuchAddressOrDevice, .operationNotSupportedByDevice]

    private func disconnected(_ reason: String) -> SerialError {
        SerialError(.disconnected, path: path, reason: reason, hint: "check the USB cable; sentry reconnects when the port returns")
    }

    static func openError(path: String, errno code: Errno) -> SerialError {
        switch code {
        case .noSuchFileOrDirectory, .operationNotSupportedByDevice, .noSuchAddressOrDevice:
            SerialError(
                .notFound, path: path, reason: "no such device",
                hint: "plug in the Arduino and check the path (ls /dev/ttyACM* /dev/ttyUSB*), or use --serial sim")
        case .permissionDenied, .notPermitted:
            SerialError(
                .permissionDenied, path: path, reason: "permission denied",
                hint: "add yourself to the dialout group (sudo usermod -aG dialout $USER) and log in again")
        case .isDirectory:
            SerialError(.notATerminal, path: path, reason: "is a directory", hint: "pass a serial port such as /dev/ttyACM0")
        case .resourceBusy:
            SerialError(.busy, path: path, reason: "port \(path) is in use by another program", hint: "close the other program and try again")
        default:
            SerialError(.other, path: path, reason: "cannot open (\(code))", hint: "pass a serial port such as /dev/ttyACM0")
        }
    }

    /// True when the settings that matter for raw 8N1 are equal.
    static func sameSettings(_ a: termios, _ b: termios) -> Bool {
        a.c_iflag == b.c_iflag && a.c_oflag == b.c_oflag && a.c_cflag == b.c_cflag && a.c_lflag == b.c_lflag
            && withUnsafePointer(to: a, cfgetospeed) == withUnsafePointer(to: b, cfgetospeed)
    }
}
