import Foundation
import ModelFiles
import Testing
import Video

@testable import FaceRecognition

/// dlib's face recognition ResNet read from its own file and run on the
/// project's interpreter, against dlib's C++ on the same chips
/// (`tools/dlib_reference.py fixtures`).
@Suite("dlib's face recognition ResNet")
struct DlibResNetTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    struct Reference: Decodable {
        let photo: String
        let chip: String
        let landmarks: [[Double]]
        let embedding: [Float]
    }

    static func references() throws -> [Reference] {
        try JSONDecoder().decode([Reference].self, from: Data(contentsOf: fixtures.appendingPathComponent("dlib-embeddings.json")))
    }

    static func embedder() throws -> FaceEmbedder {
        let path = try #require(ModelLocator.file(.faceRecognition), "no \(ModelFile.faceRecognition.rawValue): run tools/setup")
        return try FaceEmbedder(path: path)
    }

    @Test("each chip's 128 numbers equal dlib's own, within 1e-4")
    func equalsDlib() throws {
        let embedder = try Self.embedder()
        var largest: Float = 0
        for reference in try Self.references() {
            let chip = try #require(PNGReading.rgb(path: Self.fixtures.appendingPathComponent(reference.chip).path))
            #expect(chip.width == 150 && chip.height == 150)
            let embedding = embedder.embedding(ofChip: chip.pixels)
            #expect(embedding.count == 128)
            let difference = zip(embedding, reference.embedding).map { abs($0 - $1) }.max() ?? .infinity
            largest = max(largest, difference)
            #expect(difference < 1e-4, "\(reference.chip): largest difference \(difference)")
        }
        print("largest difference from dlib: \(largest)")
    }
}
