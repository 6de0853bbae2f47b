import Glibc

/// A data file's bytes (a cascade, a label list), read straight into an array:
/// Foundation's `Data` and a copy of it would add milliseconds to every start.
/// The parsers that read them are pure and take the bytes.
public enum FileContents {
    /// The bytes of `path`, at most `limit` of them: a device that never ends
    /// (`/dev/zero`) stops there.
    public static func read(_ path: String, atMost limit: Int) throws(FileReadError) -> [UInt8] {
        func unreadable() -> FileReadError { FileReadError(path: path, reason: "cannot read it (\(String(cString: strerror(errno))))") }
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw errno == ENOENT || errno == ENOTDIR ? FileReadError(path: path, reason: "no such file") : unreadable()
        }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw FileReadError(path: path, reason: "it is a directory") }
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw unreadable() }
        defer { close(file) }
        // One byte more than the size, so that the end (or a file that grew) shows in the same loop.
        var bytes = [UInt8](repeating: 0, count: fstat(file, &status) == 0 ? max(Int(status.st_size), 0) + 1 : 65536)
        var filled = 0
        while true {
            if filled == bytes.count {
                guard bytes.count <= limit else { throw FileReadError(path: path, reason: "it is larger than \(limit >> 20) MB") }
                bytes.append(contentsOf: repeatElement(0, count: bytes.count))
            }
            let count = bytes.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress! + filled, $0.count - filled) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw unreadable()
            }
            filled += count
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }
}

/// A file that could not be read: which, and why (`no such file`, `it is a directory`, the system's reason).
public struct FileReadError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

/// OpenCV's face cascades where Debian's `opencv-data` installs them.
public enum CascadeFile {
    /// The frontal face Haar cascade, the default of `--detector haar`.
    public static let haarFrontalFace = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml"
    /// The best LBP face cascade, the default of `--detector lbp`.
    public static let lbpFrontalFace = "/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml"
}
