import ShootingRange
import Testing

@Suite("The shooting range's judge")
struct RangeJudgeTests {
    let world = RangeWorld()
    let judge = RangeJudge(world: RangeWorld(), triggerDelay: 0.1, muzzleSpeed: 15)

    /// The servo angles that point at `person`'s chest (or `drop` metres below the face) at `time`.
    func aim(at person: RangePerson, time: Double, drop: Double = 0.45) -> (pan: Double, tilt: Double) {
        let place = person.position(at: time)
        return world.angles(x: place.x, y: world.faceHeight - drop, z: place.z)
    }

    @Test("a dart at a standing person's chest hits; at the face it is a face; a metre aside, a miss")
    func standing() {
        let person = RangePerson(path: .standing(x: 0.3, z: 2.5))
        #expect(judge.judge(.init(time: 1), people: [person]) { _ in aim(at: person, time: 0) }.kind == .hit)
        #expect(judge.judge(.init(time: 1), people: [person]) { _ in aim(at: person, time: 0, drop: 0) }.kind == .face)
        let aside = RangePerson(path: .standing(x: 1.3, z: 2.5))
        let outcome = judge.judge(.init(time: 1), people: [person]) { _ in aim(at: aside, time: 0) }
        #expect(outcome.kind == .miss)
        #expect(abs(outcome.across - 1.0) < 0.02)
    }

    @Test("a walker is hit where they are when the dart arrives, not where they were at the shot")
    func walking() {
        let person = RangePerson(path: .pacing(halfWidth: 1.1, z: 2.5, speed: 1, pause: 0.5))
        let shot = 1.0
        // Trigger 0.1 s, then 2.5 m at 15 m/s: about 0.27 s later the walker is 27 cm on.
        let late = judge.judge(.init(time: shot), people: [person]) { _ in aim(at: person, time: shot) }
        #expect(late.kind == .miss)
        #expect(abs(late.across + 0.27) < 0.03)
        let led = judge.judge(.init(time: shot), people: [person]) { _ in aim(at: person, time: shot + 0.1 + 2.5 / 15) }
        #expect(led.kind == .hit)
        #expect(abs(led.across) < 0.03)
    }

    @Test("the nearest body on the dart's way stops it")
    func nearestFirst() {
        let near = RangePerson(path: .standing(x: 0, z: 2.0)), far = RangePerson(path: .standing(x: 0, z: 3.0))
        let outcome = judge.judge(.init(time: 0), people: [far, near]) { _ in aim(at: far, time: 0, drop: 0.5) }
        #expect(outcome.kind == .hit)
        #expect(abs(outcome.arrival - (0.1 + 2.0 / 15)) < 0.01)
    }

    @Test("paths: standing stays, pacing turns at the ends and keeps its speed")
    func paths() {
        let path = RangePath.pacing(halfWidth: 1, z: 2, speed: 1, pause: 0.5)
        #expect(path.position(at: 0.25).x == -1)
        #expect(abs(path.position(at: 1.5).x) < 1e-9)
        #expect(abs(path.speed(at: 1.5) - 1) < 1e-6)
        #expect(path.position(at: 2.75).x == 1)
        #expect(abs(path.position(at: 5 + 1.5).x - path.position(at: 1.5).x) < 1e-9)
    }
}

@Suite("The range shows where the darts landed")
struct DartMarkTests {
    @Test("a dart's mark shows from its arrival for two seconds at the pixel it flew toward, as a hit on a torso and a miss beside it")
    func marks() {
        let world = RangeWorld()
        let judge = RangeJudge(world: world, triggerDelay: 0.1, muzzleSpeed: 15)
        let person = RangePerson(path: .standing(x: 0.3, z: 2.5))
        let place = person.position(at: 0)
        let chest = world.angles(x: place.x, y: world.faceHeight - 0.45, z: place.z)
        let wall = (pan: chest.pan - 20, tilt: chest.tilt)
        let hit = judge.judge(.init(time: 1), people: [person]) { _ in chest }
        let miss = judge.judge(.init(time: 2), people: [person]) { _ in wall }
        #expect(hit.kind == .hit && miss.kind == .miss)
        var marks = DartMarks(world: world)
        marks.landed(hit, pan: chest.pan, tilt: chest.tilt)
        marks.landed(miss, pan: wall.pan, tilt: wall.tilt)
        let chestPixel = world.pixel(pan: chest.pan, tilt: chest.tilt), wallPixel = world.pixel(pan: wall.pan, tilt: wall.tilt)
        #expect(marks.marks(at: hit.arrival - 0.05).isEmpty)
        let first = marks.marks(at: hit.arrival + 0.05)
        #expect(first.count == 1 && first[0] == (chestPixel.x, chestPixel.y, true))
        #expect(marks.marks(at: miss.arrival + 0.05).contains { $0 == (wallPixel.x, wallPixel.y, false) })
        #expect(marks.marks(at: miss.arrival + DartMarks.seconds + 0.05).isEmpty)
    }
}
