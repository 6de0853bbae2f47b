import Detectors
import Expressions
import FaceDetection
import FaceMesh
import FaceRecognition
import FoundationEssentials
import Geometry
import Imaging
import ModelFiles
import Video
import TextOutput

/// `sentry faces`: every face in a photo read as points, expression, pose and gaze.
public final class FaceReader {
    /// One face as `sentry faces --json` prints it (SPEC §8's units).
    public struct Face: Sendable {
        public var box: [Float]
        public var score: Float
        public var landmarks: [[Float]]
        public var expressions: [String: Float]
        public var states: [String]
        public var pose: [String: Float]
        public var gaze: [String: [Float]]
        public var measures: FaceMeasures
        /// The mouth's look inside; nil when too small to read (the scores then take `.neutral`).
        public var appearance: MouthAppearance?
        /// dlib's 128 numbers for the face, when the reader recognises faces.
        public var embedding: [Float]?
        /// Who it is, when the reader knows the household (`known`).
        public var person: PersonMatch?

        /// The points again as values, for drawing.
        public var points: FaceLandmarks { FaceLandmarks(points: landmarks.map { SIMD3($0[0], $0[1], $0[2]) }) }
    }

    /// One image's line.
    public struct Report: Sendable {
        public var file: String
        public var width: Int
        public var height: Int
        public var faces: [Face]
    }

    private let detector: any FaceDetector
    private let mesh: FaceMesh
    /// dlib's ResNet, when faces are to be recognised: each face's `embedding`.
    private let embedder: FaceEmbedder?
    /// The household each face is matched against: each face's `person`.
    public var known: KnownPeople?

    /// The detector `options` choose, as `run` builds it (BlazeFace's full-range model by
    /// default: its eye keypoints turn the mesh's crop), and the mesh. A photo is one frame:
    /// the detector looks at all of it, whatever rate `options` give. With `embedder`,
    /// each face is recognised too (its chip placed by the mesh's points).
    public init(detector options: DetectorOptions = DetectorOptions(), embedder: FaceEmbedder? = nil) throws {
        var options = options
        options.detectRate = nil
        options.expressions = false
        detector = try options.makeDetector().detector
        mesh = try FaceMesh()
        self.embedder = embedder
    }

    /// Reads the photo at `path`: its first frame, every face BlazeFace finds in it.
    public func read(path: String) throws(ImageError) -> (report: Report, image: GrayImage) {
        do throws(VideoError) {
            let source = try FileFrameSource.open(path: path, colour: true)
            defer { source.close() }
            guard let frame = try source.nextFrame() else { throw VideoError(source: path, reason: "has no picture", hint: "") }
            return (read(frame.image, colour: frame.chroma, file: path), frame.image)
        } catch {
            throw ImageError(path: path, reason: error.reason)
        }
    }

    /// A photo that could not be read, said as `sentry faces` is about photos, not cameras.
    public struct ImageError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "image \(path): \(reason); pass a JPEG or PNG photo (or any picture ffmpeg reads)" }
    }

    /// Every face in `image` (found in its `colour` where it has any), biggest first.
    public func read(_ image: GrayImage, colour: ChromaPlanes? = nil, file: String) -> Report {
        var detections = faces(in: image, colour: colour)
        detections.sort { $0.width * $0.height > $1.width * $1.height }
        let faces = detections.compactMap { detection -> Face? in
            guard let points = mesh.landmarks(in: image, colour: colour, region: FaceMesh.region(for: detection)) else { return nil }
            let reading = FaceReading(points, in: image)
            let (scores, pose, gaze) = (reading.scores, reading.pose, reading.gaze)
            var states = ExpressionStates()
            // A photo is one moment: its states are the scores' at the "on" thresholds, a wink without its hold.
            let active = states.update(scores, at: 0).union(states.update(scores, at: ExpressionStates.winkSeconds))
            return Face(
                box: [detection.x, detection.y, detection.width, detection.height], score: detection.score,
                landmarks: points.points.map { [$0.x, $0.y, $0.z] },
                expressions: Dictionary(uniqueKeysWithValues: zip(ExpressionScores.names, scores.values)),
                states: ExpressionState.allCases.filter(active.contains).map(\.rawValue),
                pose: ["yaw": pose.yaw, "pitch": pose.pitch, "roll": pose.roll],
                gaze: ["left": [gaze.left.x, gaze.left.y], "right": [gaze.right.x, gaze.right.y]],
                measures: reading.measures, appearance: reading.appearance, embedding: embedding(of: points, in: image, colour: colour))
        }.map { face in
            var face = face
            if let known, let embedding = face.embedding { face.person = known.identify(embedding) }
            return face
        }
        return Report(file: file, width: image.width, height: image.height, faces: faces)
    }

    private func embedding(of points: FaceLandmarks, in image: GrayImage, colour: ChromaPlanes?) -> [Float]? {
        embedder.map { $0.embedding(ofChip: FaceChip(landmarks: points).extract(from: image, colour: colour)) }
    }

    /// BlazeFace's faces with its eyes; a cascade's boxes with the eyes where a level face has them
    /// (a cascade finds upright faces only), which places the mesh's crop as well.
    private func faces(in image: GrayImage, colour: ChromaPlanes?) -> [ScoredFace] {
        var detections: [ScoredFace] = []
        if let blazeFace = detector as? BlazeFaceDetector {
            blazeFace.detect(in: image, colour: colour, into: &detections)
            return detections
        }
        var boxes: [Box] = []
        detector.detectFaces(in: image, colour: colour, at: 0, into: &boxes)
        return boxes.map { box in
            let (x, y, width, height) = (Float(box.x), Float(box.y), Float(box.width), Float(box.height))
            return ScoredFace(
                x: x, y: y, width: width, height: height, score: 1,
                rightEye: SIMD2(x + 0.32 * width, y + 0.38 * height), leftEye: SIMD2(x + 0.68 * width, y + 0.38 * height))
        }
    }
}

/// How `sentry faces` prints a report.
public enum FaceReportText {
    /// One JSON object on one line, its keys in SPEC §8's order (`file`, `width`,
    /// `height`, `faces`; per face `box`, `score`, `landmarks`, `expressions`,
    /// `states`, `pose`, `gaze`, `measures`), for people reading it as much as for
    /// programs: JSONEncoder orders keys as its dictionaries happen to.
    public static func json(_ report: FaceReader.Report) -> String {
        func numbers(_ values: [Float]) -> JSONText { .array(values.map(JSONText.number)) }
        let faces = report.faces.map { face -> JSONText in
            // Who it is, after the score, only when the household is known.
            let person: [(String, JSONText)] = face.person.map { match in
                [("name", match.name.map(JSONText.string) ?? .null), ("distance", .number(match.distance))]
            } ?? []
            return .object([("box", numbers(face.box)), ("score", .number(face.score))] + person + [
                ("landmarks", .array(face.landmarks.map(numbers))),
                ("expressions", .object(ExpressionScores.names.map { ($0, .number(face.expressions[$0] ?? 0)) })),
                ("states", .array(face.states.map(JSONText.string))),
                ("pose", .object(["yaw", "pitch", "roll"].map { ($0, .number(face.pose[$0] ?? 0)) })),
                ("gaze", .object(["left", "right"].map { ($0, numbers(face.gaze[$0] ?? [])) })),
                ("measures", measures(face)),
            ])
        }
        return JSONText.object([
            ("file", .string(report.file)), ("width", .number(Float(report.width))), ("height", .number(Float(report.height))),
            ("faces", .array(faces)),
        ]).text
    }

    /// The distances the scores are read from and the mouth's look (null when too small to read).
    private static func measures(_ face: FaceReader.Face) -> JSONText {
        let m = face.measures
        let look = face.appearance
        let values: [(String, Float)] = [
            ("eyeOpeningLeft", m.eyeOpeningLeft), ("eyeOpeningRight", m.eyeOpeningRight), ("mouthOpening", m.mouthOpening),
            ("cornerLiftLeft", m.cornerLiftLeft), ("cornerLiftRight", m.cornerLiftRight), ("mouthWidth", m.mouthWidth),
            ("browHeight", m.browHeight), ("mouthBrightness", look?.brightness ?? .nan), ("mouthContrast", look?.contrast ?? .nan),
            ("mouthHighlights", look?.highlights ?? .nan),
        ]
        return .object(values.map { ($0.0, .number($0.1)) })
    }

    /// `photo.jpg 480x480: 1 face: smile, yaw 3° pitch -2° roll 1°`, a face per clause.
    public static func line(_ report: FaceReader.Report) -> String {
        let faces = report.faces.map { face in
            let states = face.states.isEmpty ? "neutral" : face.states.joined(separator: " ")
            return String(
                printf: "\(states.replacing("%", with: "%%")) at %.0f,%.0f, yaw %.0f° pitch %.0f° roll %.0f°", face.box[0], face.box[1],
                face.pose["yaw"] ?? 0, face.pose["pitch"] ?? 0, face.pose["roll"] ?? 0) + (face.person.map(Self.who) ?? "")
        }
        let count = report.faces.count == 1 ? "1 face" : "\(report.faces.count) faces"
        return "\(report.file) \(report.width)x\(report.height): \(count)" + faces.map { "; " + $0 }.joined()
    }
}

extension FaceReportText {
    /// `, obama (0.33)`, or `, a stranger (nearest: obama, 0.82)`.
    static func who(_ match: PersonMatch) -> String {
        if let name = match.name { return ", \(name) (" + String(printf: "%.2f", match.distance) + ")" }
        guard let nearest = match.nearest else { return ", a stranger" }
        return ", a stranger (nearest: \(nearest), " + String(printf: "%.2f", match.distance) + ")"
    }
}

/// A JSON value written with its object keys in the order given.
enum JSONText {
    case null
    case number(Float)
    case string(String)
    case array([JSONText])
    case object([(String, JSONText)])

    var text: String {
        switch self {
        // Whole numbers without a fraction, others as Swift's shortest round-tripping form; never NaN.
        case .null: "null"
        case .number(let value) where !value.isFinite: "null"
        case .number(let value) where value == value.rounded() && abs(value) < 1e7: String(Int(value))
        case .number(let value): "\(value)"
        case .string(let value): Self.quoted(value)
        case .array(let values): "[" + values.map(\.text).joined(separator: ",") + "]"
        case .object(let pairs): "{" + pairs.map { Self.quoted($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    private static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(printf: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
