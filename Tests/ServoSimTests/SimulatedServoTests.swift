import Serial
import ServoSim
import Testing

@Suite("Simulated servo on a pseudo-terminal")
struct SimulatedServoTests {
    @Test("a serial client moves the simulated servo through its pty")
    func drivesOverPty() throws {
        let servo = try SimulatedServo()
        defer { servo.stop() }
        let port = try SerialPort(path: servo.devicePath)
        defer { port.close() }
        let bytes = Array("X42.Y130.".utf8)
        #expect(try port.write(bytes) == bytes.count)
        #expect(servo.waitForBytes(bytes.count, timeout: 2))
        let now = servo.current
        #expect(now.pan == 42 && now.tilt == 130 && !now.isScanning)
        #expect(servo.receivedBytes == bytes)
    }

    @Test("L starts a sweep that the track records step by step")
    func scanIsTracked() throws {
        let servo = try SimulatedServo()
        defer { servo.stop() }
        let port = try SerialPort(path: servo.devicePath)
        defer { port.close() }
        _ = try port.write(Array("X100.L".utf8))
        servo.waitForBytes(6, timeout: 2)
        let started = servo.current.time
        while servo.current.time - started < 0.2 {}
        let scanning = servo.track.filter(\.isScanning)
        #expect(scanning.count >= 10)
        let pans = scanning.map(\.pan)
        #expect(pans == Array(pans.sorted()), "the sweep goes up first")
    }
}
