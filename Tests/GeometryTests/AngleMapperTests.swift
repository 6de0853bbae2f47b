import Geometry
import Testing

@Suite("Offset-range angle formula (SPEC §2)")
struct AngleMapperTests {
    let mapper = AngleMapper(offset: 40)

    @Test("worked pan vectors for a 640 px wide frame", arguments: [(0.0, 40), (320.0, 90), (639.0, 139), (640.0, 140)])
    func panVectors(cx: Double, expected: Int) {
        #expect(mapper.angle(position: cx, extent: 640, frameWidth: 640) == expected)
    }

    @Test("worked tilt vectors for a 480 px high frame", arguments: [(240.0, 90), (100.0, 60)])
    func tiltVectors(cy: Double, expected: Int) {
        #expect(mapper.angle(position: cy, extent: 480, frameWidth: 640) == expected)
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
        #expect(wide.angle(position: 0, extent: 640, frameWidth: 640) == 0)
        #expect(wide.angle(position: 640, extent: 640, frameWidth: 640) == 180)
        #expect(wide.angle(position: 320, extent: 640, frameWidth: 640) == 90)
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

    @Test("given a 60° field of view, a 640x480 frame spans 60° of pan around 90 and 45° of tilt (the same degrees per pixel); the offset stays the limit")
    func fieldOfView() {
        let webcam = AngleMapper(offset: 40, fieldOfView: 60)
        let pans = [0.0, 160, 320, 480, 639.9].map { webcam.aim(at: ($0, 240), frameWidth: 640, frameHeight: 480).pan }
        #expect(pans == [60, 75, 90, 105, 119], "\(pans)")
        let tilts = [0.0, 240, 479.9].map { webcam.aim(at: (320, $0), frameWidth: 640, frameHeight: 480).tilt }
        #expect(tilts == [67, 90, 112], "\(tilts)")
        // A 120° lens reaches past the offset's 40...140: held there, as the turret's ends are.
        let wide = AngleMapper(offset: 40, fieldOfView: 120)
        #expect(wide.aim(at: (0, 0), frameWidth: 640, frameHeight: 480) == Aim(pan: 40, tilt: 45))
        let back = webcam.framePoint(of: Aim(pan: 75, tilt: 80), width: 640, height: 480, tiltEnabled: true)
        #expect(abs(back.x - 160) < 1e-9 && abs(back.y - (240 - 10 * 640.0 / 60)) < 1e-9, "\(back)")
    }
}
