import Foundation
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

    static func embedder() throws -> FaceEmbedder { try FaceEmbedder.installed() }

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

@Suite("The face chip, cut as dlib cuts it")
struct FaceChipTests {
    @Test("from dlib's five points, the chip is dlib's own, value for value")
    func equalsDlibsChip() throws {
        let embedder = try DlibResNetTests.embedder()
        for reference in try DlibResNetTests.references() where reference.photo.hasSuffix(".png") {
            let photo = try #require(PNGReading.rgb(path: DlibResNetTests.fixtures.appendingPathComponent(reference.photo).path))
            let dlibChip = try #require(PNGReading.rgb(path: DlibResNetTests.fixtures.appendingPathComponent(reference.chip).path)).pixels
            let chip = FaceChip(fivePoints: reference.landmarks.map { SIMD2($0[0], $0[1]) }).extract(width: photo.width, height: photo.height) { x, y in
                let at = 3 * (y * photo.width + x)
                return SIMD3(photo.pixels[at], photo.pixels[at + 1], photo.pixels[at + 2])
            }
            let differences = zip(chip, dlibChip).map { abs(Int($0) - Int($1)) }
            let distance = FaceEmbedder.distance(embedder.embedding(ofChip: chip), reference.embedding)
            print("\(reference.chip): largest difference \(differences.max()!), \(differences.filter { $0 > 0 }.count) values differ; distance \(distance)")
            #expect(differences.max()! == 0, "\(reference.chip)")
            #expect(distance < 1e-5, "\(reference.chip)")
        }
    }
}
