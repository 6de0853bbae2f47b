import CThreadPlacement

/// A set of cores a thread may run on: glibc's cpu_set_t (up to 1,024 cores),
/// held inline so that reading and changing a thread's cores allocates nothing
/// (the worker pool does it in the middle of a network run).
public struct CoreSet {
    /// The most cores a set holds.
    public static let capacity = 1024

    private var words = InlineArray<16, UInt64>(repeating: 0)

    /// No cores.
    public init() {}

    /// The cores `thread` (0: the calling one) may run on; nil if the kernel will not say.
    public static func allowed(for thread: pid_t = 0) -> CoreSet? {
        var cores = CoreSet()
        let status = withUnsafeMutableBytes(of: &cores.words) { sched_getaffinity(thread, $0.count, $0.baseAddress) }
        return status == 0 ? cores : nil
    }

    /// Lets `thread` (0: the calling one) run only on these cores; false if the kernel refused.
    @discardableResult
    public func allow(thread: pid_t = 0) -> Bool {
        var words = words
        return withUnsafeMutableBytes(of: &words) { sched_setaffinity(thread, $0.count, $0.baseAddress) } == 0
    }

    /// The core the calling thread runs on now, if the kernel says and a set can hold it.
    public static var current: Int? {
        let core = Int(sched_getcpu())
        return (0..<capacity).contains(core) ? core : nil
    }

    /// A plain loop: `allSatisfy`'s closure allocated in a debug build, and the worker
    /// pool asks in the middle of a network run whenever the caller has changed cores.
    public var isEmpty: Bool {
        for index in words.indices where words[index] != 0 { return false }
        return true
    }

    public mutating func insert(_ core: Int) { words[core / 64] |= 1 << UInt64(core % 64) }

    public mutating func remove(_ core: Int) { words[core / 64] &= ~(1 << UInt64(core % 64)) }
}

/// The kernel's id of the calling thread (its name under /proc/self/task).
public func currentThreadID() -> pid_t { gettid() }
