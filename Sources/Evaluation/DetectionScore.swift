import Geometry

/// Recall, precision and F1 of detections against labelled faces at one
/// overlap threshold: each labelled face is matched to at most one detection
/// and each detection to at most one face, best overlaps first.
public struct DetectionScore: Sendable, Equatable {
    /// The intersection over union a detection needs to count as a face found.
    public let threshold: Double
    public private(set) var found = 0
    public private(set) var missed = 0
    public private(set) var falseAlarms = 0

    public init(threshold: Double) {
        self.threshold = threshold
    }

    public var recall: Double { found + missed == 0 ? 0 : Double(found) / Double(found + missed) }
    public var precision: Double { found + falseAlarms == 0 ? 0 : Double(found) / Double(found + falseAlarms) }
    public var f1: Double { recall + precision == 0 ? 0 : 2 * recall * precision / (recall + precision) }

    /// Adds one image: its labelled faces, faces that may be found or missed
    /// freely (`ignored`), and what the detector found.
    public mutating func add(faces: [Box], ignored: [Box] = [], detections: [Box]) {
        var pairs: [(overlap: Double, face: Int, detection: Int)] = []
        for (f, face) in faces.enumerated() {
            for (d, detection) in detections.enumerated() {
                let overlap = face.intersectionOverUnion(detection)
                if overlap >= threshold { pairs.append((overlap, f, d)) }
            }
        }
        pairs.sort { $0.overlap > $1.overlap }
        var faceTaken = [Bool](repeating: false, count: faces.count)
        var detectionTaken = [Bool](repeating: false, count: detections.count)
        for pair in pairs where !faceTaken[pair.face] && !detectionTaken[pair.detection] {
            faceTaken[pair.face] = true
            detectionTaken[pair.detection] = true
        }
        found += faceTaken.filter { $0 }.count
        missed += faceTaken.filter { !$0 }.count
        for (d, detection) in detections.enumerated() where !detectionTaken[d] {
            if !ignored.contains(where: { $0.intersectionOverUnion(detection) >= threshold }) { falseAlarms += 1 }
        }
    }
}
