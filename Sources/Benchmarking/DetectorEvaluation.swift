import Detectors
import Evaluation
import ModelFiles
import FaceDetection
import FoundationEssentials
import Geometry
import Imaging
import TextOutput
import Video

/// `sentry eval`: a detector against human-labelled faces.
public enum DetectorEvaluation {
    public struct Report: Sendable {
        public var detector: String
        public var images: Int
        public var faces: Int
        /// At IoU 0.5 and 0.3: on the photos in colour for a detector that reads it, else in gray.
        public var scores: [DetectionScore]
        /// The same detector on the photos' gray, for one that reads colour (nil for the cascades).
        public var grayScores: [DetectionScore]?

        public var description: String {
            var lines = ["sentry eval: \(images) images, \(faces) labelled faces, detector \(detector)"]
            func add(_ scores: [DetectionScore], _ label: String) {
                for score in scores {
                    lines.append(
                        String(
                            printf: "  \(label.replacing("%", with: "%%"))IoU >= %.1f: recall %.3f  precision %.3f  F1 %.3f  (found %d, missed %d, false %d)",
                            score.threshold, score.recall, score.precision, score.f1,
                            score.found, score.missed, score.falseAlarms))
                }
            }
            if let grayScores {
                add(scores, "colour ")
                add(grayScores, "gray   ")
            } else {
                add(scores, "")
            }
            return lines.joined(separator: "\n")
        }
    }

    /// Runs the detector `options` choose over every labelled image in `directory`.
    public static func run(images directory: String, labels path: String, detector options: DetectorOptions) throws -> Report {
        let labels = try FaceLabels(contentsOfFile: path)
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory else {
            throw LabelError(path: path, reason: "the images folder \(directory) does not exist")
        }
        let (detector, name) = try options.makeDetector()
        let colour = detector.readsColour
        var scores = [DetectionScore(threshold: 0.5), DetectionScore(threshold: 0.3)], grayScores = scores
        var detections: [Box] = []
        // Photos an hour apart: each one a full pass, however often a --detect-fps schedule looks.
        for (index, image) in labels.images.enumerated() {
            let time = Double(index) * 3600
            let file = URL(fileURLWithPath: directory).appendingPathComponent(image.file).path
            let source = try FileFrameSource.open(path: file, colour: colour)
            defer { source.close() }
            guard let frame = try source.nextFrame() else {
                throw VideoError(source: file, reason: "has no frame", hint: "check the image file")
            }
            detector.detectFaces(in: frame.image, colour: frame.chroma, at: time, into: &detections)
            for index in scores.indices { scores[index].add(faces: image.faces, ignored: image.ignored, detections: detections) }
            guard colour else { continue }
            detector.detectFaces(in: frame.image, colour: nil, at: time + 1800, into: &detections)
            for index in grayScores.indices { grayScores[index].add(faces: image.faces, ignored: image.ignored, detections: detections) }
        }
        return Report(
            detector: name, images: labels.images.count, faces: labels.images.map(\.faces.count).reduce(0, +),
            scores: scores, grayScores: colour ? grayScores : nil)
    }
}

extension FaceLabels {
    /// Reads a label file (`sentry eval`); errors name the file and the line.
    public init(contentsOfFile path: String) throws(LabelError) {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path, atMost: 64 << 20)
        } catch {
            throw LabelError(path: path, reason: error.reason)
        }
        try self.init(bytes: bytes, path: path)
    }
}
