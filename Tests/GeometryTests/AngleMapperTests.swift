import Geometry
import Testing

@Suite("Offset-range angle formula (SPEC §2)")
struct AngleMapperTests {
    let mapper = AngleMapper(offset: 40)

    @Test("worked pan vectors for a 640 px wide frame", arguments: [(0.0, 40), (320.0, 90), (639.0, 139), (640.0, 140)])
    func panVectors(cx: Double, expected: Int) {
        #expect(mapper.angle(position: cx, extent: 640) == expected)
    }

    @Test("worked tilt vectors for a 480 px high frame", arguments: [(240.0, 90), (100.0, 60)])
    func tiltVectors(cy: Double, expected: Int) {
        #expect(mapper.angle(position: cy, extent: 480) == expected)
    }

    @Test("the centre of a box in the middle of the frame maps to 90/90")
    func boxCentre() {
        let aim = mapper.aim(at: Box(x: 300, y: 220, width: 40, height: 40), frameWidth: 640, frameHeight: 480)
        #expect(aim == Aim(pan: 90, tilt: 90))
    }

    @Test("mirroring gives 180 - angle after the formula")
    func mirroring() {
        let mirrored = AngleMapper(offset: 40, invertX: true, invertY: true)
        let aim = mirrored.aim(at: Box(x: 0, y: 90, width: 0, height: 20), frameWidth: 640, frameHeight: 480)
        #expect(aim == Aim(pan: 140, tilt: 120))
    }

    @Test("another offset changes the output range")
    func otherOffset() {
        let wide = AngleMapper(offset: 0)
        #expect(wide.angle(position: 0, extent: 640) == 0)
        #expect(wide.angle(position: 640, extent: 640) == 180)
        #expect(wide.angle(position: 320, extent: 640) == 90)
    }

    @Test(
        "the frame point of an aim undoes the formula: within one degree's pixels of the point it came from, mirrored too",
        arguments: [false, true])
    func framePointUndoesTheFormula(inverted: Bool) {
        let mapper = AngleMapper(offset: 30, invertX: inverted, invertY: inverted)
        let degreeInPixels = 640.0 / Double(180 - 60)
        for x in stride(from: 0.0, through: 640, by: 37) {
            let y = x * 480 / 640
            let aim = mapper.aim(at: (x, y), frameWidth: 640, frameHeight: 480)
            let point = mapper.framePoint(of: aim, width: 640, height: 480, tiltEnabled: true)
            #expect(abs(point.x - x) <= degreeInPixels && abs(point.y - y) <= 480.0 / 120, "\(x), \(y) -> \(aim) -> \(point)")
        }
        #expect(mapper.framePoint(of: Aim(pan: 90, tilt: 10), width: 640, height: 480, tiltEnabled: false).y == 240, "no tilt: the middle")
        #expect(mapper.framePoint(of: Aim(pan: 0, tilt: 90), width: 640, height: 480, tiltEnabled: false).x == (inverted ? 640 : 0), "within the frame")
    }
}
