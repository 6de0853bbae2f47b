import Testing
import TurretProtocol

@Suite("Servo trim: the angles on the wire")
struct ServoTrimTests {
    @Test("pan and fire take the pan trim, tilt the tilt trim, L none")
    func eachCommand() {
        let trim = ServoTrim(pan: 6, tilt: -4)
        #expect(trim.applied(to: .pan(90)) == .pan(96))
        #expect(trim.applied(to: .fire(90)) == .fire(96))
        #expect(trim.applied(to: .tilt(90)) == .tilt(86))
        #expect(trim.applied(to: .lost) == .lost)
    }

    @Test("a trimmed angle stays within the protocol's 0-180°")
    func clamped() {
        #expect(ServoTrim(pan: 5).applied(to: .pan(178)) == .pan(180))
        #expect(ServoTrim(pan: -5).applied(to: .pan(3)) == .pan(0))
        #expect(ServoTrim(tilt: 30).applied(to: .tilt(170)) == .tilt(180))
    }
}
