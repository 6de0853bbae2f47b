import Foundation
import Testing
import TestClips

/// `sentry range` through the binary: people walking before the virtual
/// camera, the simulated turret armed, every dart judged. Floors below the
/// figures in PERFORMANCE.md, so that a lead that stops leading fails.
@Suite("The virtual shooting range, through the binary")
struct ShootingRangeRunTests {
    static let face = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut-colour.jpg").path

    /// The table's row for `scenario`: shots, hits, misses, faces.
    static func row(_ output: String, _ scenario: String) throws -> (shots: Int, hits: Int, misses: Int, faces: Int) {
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix(scenario + " ") }, "\(output)")
        let fields = line.split(separator: " ").filter { !$0.hasPrefix("(") }
        // scenario, speed ("still" or "1 m/s"), shots, hits, misses, faces, …
        let speedEnd = try #require(fields.firstIndex { $0 == "still" || $0 == "m/s" }, "\(line)")
        let numbers = fields[(speedEnd + 1)...].compactMap { Int($0) }
        try #require(numbers.count >= 4, "\(line)")
        return (numbers[0], numbers[1], numbers[2], numbers[3])
    }

    /// Each walking scenario's floor: the share of shots that must hit, below
    /// PERFORMANCE.md's figures (91 %, 80 %, 62 %, 38 %, 94 %, 62 %).
    static let floors: [(scenario: String, hits: Double)] = [
        ("crossing-1", 0.8), ("crossing-2", 0.65), ("stop-and-go", 0.5), ("reversing", 0.25), ("toward-away", 0.8), ("two-crossing", 0.5),
    ]

    @Test("people walking (crossing at 1 and 2 m/s, stopping, turning back, coming closer, two crossing) are hit at the floors with the defaults, and no dart meets a face")
    func walking() throws {
        let range = try SentryProcess(
            ["range", "--face", Self.face, "--scenarios", Self.floors.map(\.scenario).joined(separator: ","), "--", "--fire-cooldown", "1"])
        #expect(range.status == 0, "\(range.standardError)")
        for (scenario, floor) in Self.floors {
            let row = try Self.row(range.standardOutput, scenario)
            #expect(row.shots >= 5, "\(scenario): \(range.standardOutput)")
            #expect(Double(row.hits) >= floor * Double(row.shots), "\(scenario): \(range.standardOutput)")
            #expect(row.faces == 0, "\(scenario): \(range.standardOutput)")
        }
    }

    @Test("a person standing still is hit with the defaults, as before the lead")
    func standing() throws {
        let range = try SentryProcess(["range", "--face", Self.face, "--scenarios", "standing", "--", "--fire-cooldown", "1"])
        #expect(range.status == 0, "\(range.standardError)")
        let standing = try Self.row(range.standardOutput, "standing")
        #expect(standing.shots >= 5 && standing.hits == standing.shots && standing.faces == 0, "\(range.standardOutput)")
    }

    @Test("a scenario that is none, or a range camera without a photo, is one line")
    func badInput() throws {
        let unknown = try SentryProcess(["range", "--face", Self.face, "--scenarios", "jogging"])
        #expect(unknown.status == 64)
        #expect(unknown.standardError.contains("'jogging' is none of standing, crossing-1"), "\(unknown.standardError)")
        let noPhoto = try SentryProcess(["--camera", "range:standing", "--serial", "sim"])
        #expect(noPhoto.status == 64)
        #expect(noPhoto.standardError.split(separator: "\n").count == 1 && noPhoto.standardError.contains("range:SCENARIO:PHOTO"), "\(noPhoto.standardError)")
    }
}

extension ShootingRangeRunTests {
    /// The median aim error of a `range --unarmed` row, in degrees.
    static func medianAimError(_ output: String, _ scenario: String) throws -> Double {
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix(scenario + " ") }, "\(output)")
        let degrees = line.split(separator: " ").filter { $0.hasSuffix("°") }.compactMap { Double($0.dropLast()) }
        return try #require(degrees.first, "\(line)")
    }

    @Test("unarmed, --lead aims a walker where they are at the wire: the median error well under --no-lead's")
    func unarmedLead() throws {
        let led = try SentryProcess(["range", "--face", Self.face, "--unarmed", "--scenarios", "crossing-1"])
        let plain = try SentryProcess(["range", "--face", Self.face, "--unarmed", "--scenarios", "crossing-1", "--", "--no-lead"])
        #expect(led.status == 0 && plain.status == 0, "\(led.standardError) \(plain.standardError)")
        let withLead = try Self.medianAimError(led.standardOutput, "crossing-1"), without = try Self.medianAimError(plain.standardOutput, "crossing-1")
        #expect(withLead <= 0.7 * without, "--lead \(withLead)°, --no-lead \(without)°")
    }
}
