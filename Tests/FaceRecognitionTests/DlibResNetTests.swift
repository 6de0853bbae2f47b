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

@Suite("dlib's serialisation read safely")
struct DlibReadingTests {
    static let file: [UInt8] = {
        guard let path = try? FaceEmbedder.installedPath(), let data = FileManager.default.contents(atPath: path) else { return [] }
        return [UInt8](data)
    }()

    @Test("the file cut anywhere is an error naming where, never a crash")
    func truncated() throws {
        try #require(!Self.file.isEmpty, "no model: run tools/setup")
        for cut in [0, 1, 5, 40, 400, 4000, 40_000, 400_000, 4_000_000, Self.file.count - 1] {
            #expect(throws: DlibFormatError.self, "cut at \(cut)") { try DlibResNet.read(Array(Self.file.prefix(cut))) }
        }
        #expect(throws: DlibFormatError.self) { try DlibResNet.read(Self.file + [0]) }
    }

    @Test("another network, or a tensor larger than the file, is refused before anything is allocated")
    func hostile() throws {
        try #require(!Self.file.isEmpty, "no model: run tools/setup")
        var renamed = Self.file
        let at = try #require(renamed.firstRange(of: Array("con_4".utf8)))
        renamed.replaceSubrange(at, with: Array("con_9".utf8))
        #expect {
            try DlibResNet.read(renamed)
        } throws: { error in
            (error as? DlibFormatError)?.reason.contains("found the layer con_9 where con_4 belongs") == true
        }
        // The loss, then a tensor's version and sizes claiming 2^40 values.
        var huge = DlibStream(bytes: [0x01, 0x02, 0x06, 0, 0, 0, 0, 0, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01])
        #expect { _ = try huge.tensor("a tensor") } throws: { error in
            (error as? DlibFormatError)?.reason == "a tensor's samples is 1099511627776, outside 0...3"
        }
    }
}

extension DlibReadingTests {
    @Test("a string's length that reaches past the file's end is an error (fuzz-model found it)")
    func stringPastTheEnd() throws {
        // The loss layer's version, then a name whose length (3) is read before the 2 bytes left are counted.
        #expect(throws: DlibFormatError.self) { try DlibResNet.read([0x01, 0x01, 0x01, 0x03, 0x41, 0x42]) }
    }
}
