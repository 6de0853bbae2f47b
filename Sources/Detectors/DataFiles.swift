import FaceDetection
import ModelFiles

/// Why a cascade file could not be used. `description` is one line naming the
/// file and what to do.
public struct CascadeError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String {
        "cannot use cascade \(path): \(reason); pass an OpenCV Haar cascade XML with --cascade, e.g. /usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml (Debian package opencv-data)"
    }
}
extension HaarCascade {
    /// No cascade comes near this.
    static let maximumFileBytes = 64 << 20

    /// Loads a cascade file, with a clear error for a missing, unreadable or
    /// malformed file. The file is read here, at the edge; the parsing is `FaceDetection`'s.
    public init(contentsOfFile path: String) throws(CascadeError) {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path, atMost: Self.maximumFileBytes)
        } catch {
            throw CascadeError(path: path, reason: error.reason)
        }
        do {
            try self.init(xml: bytes)
        } catch {
            throw CascadeError(path: path, reason: error.description)
        }
    }
}
