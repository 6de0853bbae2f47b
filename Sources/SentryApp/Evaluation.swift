import Evaluation
import FaceDetection
import Foundation
import Geometry
import Video

/// `sentry eval`: a detector against human-labelled faces.
public enum Evaluation {
    public struct Report: Sendable {
        public var detector: String
        public var images: Int
        public var faces: Int
        /// At IoU 0.5 and 0.3.
        public var scores: [DetectionScore]

        public var description: String {
            var lines = ["sentry eval: \(images) images, \(faces) labelled faces, detector \(detector)"]
            for score in scores {
                lines.append(
                    String(
                        format: "  IoU >= %.1f: recall %.3f  precision %.3f  F1 %.3f  (found %d, missed %d, false %d)",
                        score.threshold, score.recall, score.precision, score.f1,
                        score.found, score.missed, score.falseAlarms))
            }
            return lines.joined(separator: "\n")
        }
    }

    /// Runs the detector `options` choose over every labelled image in `directory`.
    public static func run(images directory: String, labels path: String, detector options: DetectorOptions) throws -> Report {
        let labels = try FaceLabels(contentsOfFile: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw LabelError(path: path, reason: "the images folder \(directory) does not exist")
        }
        let (detector, name) = try Runner.makeDetector(options)
        var scores = [DetectionScore(threshold: 0.5), DetectionScore(threshold: 0.3)]
        var detections: [Box] = []
        for image in labels.images {
            let file = URL(fileURLWithPath: directory).appendingPathComponent(image.file).path
            let source = try FileFrameSource.open(path: file)
            defer { source.close() }
            guard let frame = try source.nextFrame() else {
                throw VideoError(source: file, reason: "has no frame", hint: "check the image file")
            }
            detector.detectFaces(in: frame.image, into: &detections)
            for index in scores.indices { scores[index].add(faces: image.faces, ignored: image.ignored, detections: detections) }
        }
        return Report(
            detector: name, images: labels.images.count, faces: labels.images.map(\.faces.count).reduce(0, +),
            scores: scores)
    }
}
