import Testing
import TurretProtocol

@Suite("The firmware's state machine in Swift (SPEC §3)")
struct ServoControllerTests {
    func feed(_ text: String, to servo: inout ServoController, at time: Double = 0) {
        for scalar in text.unicodeScalars { servo.receive(UInt8(truncatingIfNeeded: scalar.value), at: time) }
    }

    @Test("boots centred at 90°")
    func boot() {
        let servo = ServoController()
        #expect(servo.pan == 90 && servo.tilt == 90 && !servo.isScanning)
    }

    @Test("X and Y move their servos", arguments: [("X0.", 0, 90), ("X180.", 180, 90), ("X45.Y120.", 45, 120), ("Y7.", 90, 7)])
    func moves(input: String, pan: Int, tilt: Int) {
        var servo = ServoController()
        feed(input, to: &servo)
        #expect(servo.pan == pan && servo.tilt == tilt)
    }

    @Test(
        "garbage, numbers above 180 and over-long numbers never move a servo",
        arguments: ["X181.", "X999999.", "X1000.", "X-5.", ".", "X", "X.", "\u{FF}\u{80}\u{00}", "x90.", "X 90.", "Z90.", "90."])
    func garbage(input: String) {
        var servo = ServoController()
        feed("X33.", to: &servo)
        feed(input, to: &servo)
        #expect(servo.pan == 33 && servo.tilt == 90)
    }

    @Test("after any garbage the next valid command still works")
    func recovers() {
        var servo = ServoController()
        feed("X999999X-5.\u{FF}XX90.", to: &servo)
        #expect(servo.pan == 90)
        feed("X12", to: &servo)
        feed("L", to: &servo)
        #expect(servo.isScanning)
    }

    @Test("scan sweeps 1° per 15 ms from the current angle, up first, between 20 and 160")
    func sweep() {
        var servo = ServoController()
        feed("X150.L", to: &servo, at: 0)
        servo.advance(to: 0.0149)
        #expect(servo.pan == 150)
        servo.advance(to: 0.015)
        #expect(servo.pan == 151)
        servo.advance(to: 0.15)
        #expect(servo.pan == 160)
        servo.advance(to: 0.165)
        #expect(servo.pan == 159)
        // 140 more steps down to 20, then back up.
        servo.advance(to: 0.15 + 140 * 0.015)
        #expect(servo.pan == 20)
        servo.advance(to: 0.15 + 141 * 0.015)
        #expect(servo.pan == 21)
    }

    @Test("a command byte stops the sweep where it is; garbage does not")
    func stopsScan() {
        var servo = ServoController()
        feed("X100.L", to: &servo, at: 0)
        feed("?", to: &servo, at: 0.031)
        #expect(servo.isScanning && servo.pan == 102)
        feed("X", to: &servo, at: 0.046)
        #expect(!servo.isScanning && servo.pan == 103)
        servo.advance(to: 1)
        #expect(servo.pan == 103)
        feed("60.", to: &servo, at: 1)
        #expect(servo.pan == 60)
    }

    @Test("mechanical limits clamp commands and the sweep")
    func limits() {
        var servo = ServoController(limits: 30...150)
        feed("X0.", to: &servo)
        #expect(servo.pan == 30)
        feed("X180.L", to: &servo)
        #expect(servo.pan == 150)
        servo.advance(to: 0.015)
        #expect(servo.pan == 149)
        servo.advance(to: 100)
        #expect((30...150).contains(servo.pan))
    }
}
