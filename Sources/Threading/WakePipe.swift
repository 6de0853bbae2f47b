#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import SystemPackage

/// A pipe that wakes a thread sleeping in `poll`: the thread polls
/// `readEnd` beside its own descriptors, any thread calls `wake()`.
/// A condition variable cannot do this, because the sleeper is waiting for
/// a descriptor (a serial port hanging up) as much as for another thread.
public final class WakePipe: @unchecked Sendable {
    /// The end to poll for `POLLIN`.
    public let readEnd: Int32
    private let writeEnd: Int32

    /// `nil` when the process is out of descriptors.
    public init?() {
        // pipe2's flags: never inheritable, not even between pipe and fcntl while another thread starts a child.
        guard let ends = try? FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking]) else { return nil }
        readEnd = ends.readEnd.rawValue
        writeEnd = ends.writeEnd.rawValue
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the sleeper (or the next `poll`, if none sleeps now). Never
    /// blocks: a full pipe already holds a wake-up.
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe after a wake-up, so the next `poll` sleeps again.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}
