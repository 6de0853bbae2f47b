#if canImport(Glibc)
    import Glibc
#endif
import SystemPackage

/// A pseudo-terminal pair: a program opens `devicePath` as if it were a
/// serial port, and whoever holds `controller` sees its bytes (and can answer).
/// Both ends start in raw mode, so no byte is echoed or translated.
public final class PseudoTerminal {
    /// The master side, read and written by the simulator; nil once closed.
    public private(set) var controller: FileDescriptor?
    /// The slave side, kept open so that the device exists while the pair lives; nil once closed.
    public private(set) var device: FileDescriptor?
    /// `/dev/pts/N`: the path a serial client opens.
    public let devicePath: String

    public init() throws(SerialError) {
        var master: Int32 = -1, slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else {
            throw SerialError(
                .other, path: "/dev/ptmx", reason: "cannot create a pseudo-terminal (\(Errno(rawValue: errno)))",
                hint: "check that /dev/pts is mounted")
        }
        var settings = termios()
        tcgetattr(slave, &settings)
        cfmakeraw(&settings)
        tcsetattr(slave, TCSANOW, &settings)
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        controller = FileDescriptor(rawValue: master)
        device = FileDescriptor(rawValue: slave)
        // ttyname_r: plain ttyname shares one buffer between threads. Where it fails (under
        // qemu-user its check of the name against the descriptor does), the descriptor's link.
        var name = [CChar](repeating: 0, count: 128)
        if ttyname_r(slave, &name, name.count) == 0 {
            devicePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        } else {
            let count = readlink("/proc/self/fd/\(slave)", &name, name.count - 1)
            devicePath = count > 0 ? String(decoding: name[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        }
    }

    deinit { close() }

    /// Reads what has arrived on the controller side, waiting up to `timeout`
    /// seconds for the first byte. Empty when nothing came.
    public func read(timeout: Double) -> [UInt8] {
        guard let controller else { return [] }
        var pollfd = Glibc.pollfd(fd: controller.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&pollfd, 1, Int32(timeout * 1000)) > 0, pollfd.revents & Int16(POLLIN) != 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = (try? buffer.withUnsafeMutableBytes { try controller.read(into: $0) }) ?? 0
        return Array(buffer[0..<count])
    }

    /// Closes both sides. Idempotent.
    public func close() {
        try? controller?.close()
        try? device?.close()
        controller = nil
        device = nil
    }
}
