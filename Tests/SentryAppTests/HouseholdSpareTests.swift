import FaceRecognition
import Geometry
import Imaging
import SentryApp
import Testing
import Tracking
import TurretProtocol

/// Who each target is, as a test decides it.
private final class FixedIdentities: FaceIdentities, @unchecked Sendable {
    let person: PersonMatch?
    init(_ person: PersonMatch?) { self.person = person }
    func person(of id: Int) -> PersonMatch? { person }
}

@Suite("--spare known: fire only at a target recognised as a stranger")
struct HouseholdSpareTests {
    /// 90 frames of a still face, armed, locked after 0.5 s; the commands sent and the results.
    static func run(_ person: PersonMatch?, sparing spared: SparedPeople? = .household) throws -> (sent: [Command], results: [FrameResult]) {
        var settings = PipelineSettings()
        settings.lockAfter = 0.5
        settings.fire = FireControl.Settings()
        settings.panOnlyBelowHeads = true
        settings.sparedPeople = spared
        // Frames faster than real time: the turret's travel and settling are timed on their clock.
        settings.turretClock = .frames
        let output = RecordingOutput()
        let pipeline = Pipeline(detector: StillFaceDetector(), output: output, settings: settings, identities: FixedIdentities(person))
        let image = GrayImage(width: 640, height: 480)
        let results = try (0..<90).map { index in try pipeline.process(Frame(image: image, timestamp: Double(index) / 30, index: index)) }
        return (output.sent, results)
    }

    @Test("one of the household, or a target not recognised yet, gets no F; the locked frames say why")
    func heldAtTheHousehold() throws {
        let alice = try Self.run(PersonMatch(name: "alice", distance: 0.3, nearest: "alice"))
        #expect(!alice.sent.contains { $0.axis == .trigger })
        #expect(alice.results.filter(\.isLocked).allSatisfy { $0.heldFire == .household && $0.person?.name == "alice" })
        #expect(alice.results.contains { $0.isLocked })
        let unread = try Self.run(nil)
        #expect(!unread.sent.contains { $0.axis == .trigger })
        #expect(unread.results.filter(\.isLocked).allSatisfy { $0.heldFire == .unrecognised })
    }

    @Test("a stranger is fired at as without --spare known; and without it, the household too")
    func firesAtAStranger() throws {
        let stranger = try Self.run(PersonMatch(name: nil, distance: 0.8, nearest: "alice"))
        #expect(stranger.sent.contains { $0.axis == .trigger })
        let unspared = try Self.run(PersonMatch(name: "alice", distance: 0.3, nearest: "alice"), sparing: nil)
        #expect(unspared.sent.filter { $0.axis == .trigger }.count == stranger.sent.filter { $0.axis == .trigger }.count)
    }

    @Test("--spare NAME holds fire at that person and at a target not recognised yet; the rest of the household is fired at")
    func sparesOnePerson() throws {
        let alice = PersonMatch(name: "alice", distance: 0.3, nearest: "alice"), bob = PersonMatch(name: "bob", distance: 0.3, nearest: "bob")
        let spared = try Self.run(alice, sparing: .person("alice"))
        #expect(!spared.sent.contains { $0.axis == .trigger })
        #expect(spared.results.contains { $0.isLocked } && spared.results.filter(\.isLocked).allSatisfy { $0.heldFire == .sparedByName })
        let unread = try Self.run(nil, sparing: .person("alice"))
        #expect(unread.results.filter(\.isLocked).allSatisfy { $0.heldFire == .unrecognised } && !unread.sent.contains { $0.axis == .trigger })
        let other = try Self.run(bob, sparing: .person("alice"))
        #expect(other.sent.contains { $0.axis == .trigger })
    }
}

/// Who each face is, by the tracker's number.
private final class IdentitiesByID: FaceIdentities, @unchecked Sendable {
    let people: [Int: PersonMatch]
    init(_ people: [Int: PersonMatch]) { self.people = people }
    func person(of id: Int) -> PersonMatch? { people[id] }
}

@Suite("--target unknown: among several faces, follow the stranger")
struct TargetUnknownTests {
    /// Frames of two still faces, the larger (tracked as 1) one of the household, the smaller (2) a stranger: each frame's target.
    static func targets(strangersFirst: Bool) throws -> [Box?] {
        var settings = PipelineSettings()
        settings.targetsStrangers = strangersFirst
        let household = Box(x: 100, y: 100, width: 120, height: 120), stranger = Box(x: 420, y: 120, width: 70, height: 70)
        let identities = IdentitiesByID([
            1: PersonMatch(name: "alice", distance: 0.3, nearest: "alice"), 2: PersonMatch(name: nil, distance: 0.8, nearest: "alice"),
        ])
        let pipeline = Pipeline(detector: FixedFaces([household, stranger]), output: RecordingOutput(), settings: settings, identities: identities)
        let image = GrayImage(width: 640, height: 480)
        return try (0..<10).map { index in try pipeline.process(Frame(image: image, timestamp: Double(index) / 30, index: index)).target }
    }

    @Test("the stranger is the target from the frame after the household's face was known; without it, the largest face")
    func followsTheStranger() throws {
        let stranger = Box(x: 420, y: 120, width: 70, height: 70)
        let unknown = try Self.targets(strangersFirst: true)
        #expect(unknown.dropFirst().allSatisfy { $0 == stranger }, "\(unknown)")
        let largest = try Self.targets(strangersFirst: false)
        #expect(largest.allSatisfy { $0?.x == 100 }, "\(largest)")
    }
}
