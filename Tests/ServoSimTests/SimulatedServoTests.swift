import Serial
@testable import ServoSim
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

    @Test("what it heard is counted in full and kept only in part: 3 MiB of commands leave the newest 1 to 2 MiB and every command counted")
    func boundedHistory() throws {
        let servo = try SimulatedServo(secondsPer60Degrees: 0)
        defer { servo.stop() }
        let port = try SerialPort(path: servo.devicePath)
        defer { port.close() }
        let block = Array(String(repeating: "X10.X170.L", count: 1000).utf8)
        let rounds = 3 * (1 << 20) / block.count
        for _ in 0..<rounds {
            var sent = 0
            while sent < block.count { sent += try port.write(Array(block[sent...])) }
        }
        #expect(servo.waitForBytes(rounds * block.count, timeout: 30))
        let tally = servo.tally
        #expect(tally.bytes == rounds * block.count && tally.commands == rounds * 3000 && tally.lost == rounds * 1000)
        let kept = servo.receivedBytes.count
        #expect(kept >= SimulatedServo.keptBytes && kept <= 2 * SimulatedServo.keptBytes, "\(kept) bytes kept")
        #expect(servo.track.count <= 2 * SimulatedServo.keptSamples)
    }

    @Test("a recent history keeps between its capacity and twice it, the newest last, and counts all")
    func recentHistory() {
        var history = RecentHistory<Int>(capacity: 4)
        for value in 0..<11 { history.append(value) }
        #expect(history.totalCount == 11 && history.last == 10)
        #expect((4...8).contains(history.elements.count) && history.elements == Array((11 - history.elements.count)..<11))
    }
}
