import ServoSim
import Testing
import TurretProtocol

@Suite("The bundled firmware in simavr, against the vectors and the Swift simulator")
struct FirmwareTests {
    /// Wait after each vector: not a multiple of the 15 ms sweep step.
    static let settle = 0.037
    /// Second reading, to see whether the pan servo moves by itself.
    static let recheck = 0.047

    @Test("every protocol vector: firmware and Swift simulator both end where the file says")
    func vectors() throws {
        let vectors = try ProtocolVector.load()
        #expect(vectors.count >= 20)
        let firmware = try FirmwareSimulator()
        var swift = ServoController()
        var time = 0.0
        for vector in vectors {
            firmware.send(vector.bytes)
            firmware.wait(milliseconds: Self.settle * 1000)
            for byte in vector.bytes {
                swift.receive(byte, at: time)
                time += 1 / FirmwareSimulator.bytesPerSecond
            }
            time += Self.settle
            swift.advance(to: time)
            let measured = try firmware.angles()
            let tolerance = vector.sweeping ? 1 : 0
            #expect(
                abs(swift.pan - vector.pan) <= tolerance && swift.tilt == vector.tilt,
                "Swift after \(vector): pan \(swift.pan) tilt \(swift.tilt), expected \(vector.pan)/\(vector.tilt)")
            #expect(
                abs(measured.pan - vector.pan) <= 1 && abs(measured.tilt - vector.tilt) <= 1,
                "firmware after \(vector): pan \(measured.pan) tilt \(measured.tilt), expected \(vector.pan)/\(vector.tilt)")
            #expect(abs(measured.pan - swift.pan) <= 1, "after \(vector): firmware \(measured.pan), Swift \(swift.pan)")
            #expect(swift.isScanning == vector.sweeping, "Swift sweeping after \(vector)")
            // The pan servo sweeps if it keeps moving.
            let before = swift.pan
            firmware.wait(milliseconds: Self.recheck * 1000)
            time += Self.recheck
            swift.advance(to: time)
            let later = try firmware.angles()
            #expect((later.pan != measured.pan) == vector.sweeping, "firmware sweeping after \(vector)")
            #expect((swift.pan != before) == vector.sweeping, "Swift sweeping after \(vector)")
        }
    }

    @Test("scan sweeps between 20 and 160 at 1° per 15 ms (±10%), and a command stops it within a byte time")
    func sweep() throws {
        let firmware = try FirmwareSimulator()
        firmware.send(Array("X30.L".utf8))
        let start = try firmware.angles()
        var pans: [Int] = []
        // Read every 5 ms so that no 15 ms step is missed.
        for _ in 0..<1020 {
            firmware.wait(milliseconds: 5)
            pans.append(try firmware.angles().pan)
        }
        #expect(pans.max() == 160)
        #expect(pans.min() == 20)
        // 30 → 160 → 20: 130 + 140 steps.
        let firstLow = try #require(pans.firstIndex(of: 20))
        let elapsed = Double(firstLow + 1) * 5
        let perStep = elapsed / 270
        #expect(abs(perStep - 15) <= 1.5, "\(perStep) ms per degree from \(start.pan)")

        firmware.send([UInt8(ascii: "X")])
        let stopped = try firmware.angles()
        firmware.wait(milliseconds: 200)
        #expect(try firmware.angles().pan == stopped.pan, "X did not stop the sweep")
    }

    @Test("100,000 random bytes and targeted garbage: widths stay in 544–2400 µs, X90. always answers within 40 ms, the trigger never rises")
    func fuzz() throws {
        let firmware = try FirmwareSimulator()
        var generator = SeededGenerator(seed: 0x5E47_12)
        let targeted = [
            "X", "X999999.", "X-5.", "XX90.", "\u{80}\u{FF}\u{FE}", ".", "X12", "L", "Y", "Y1234567890.", "X90",
            // Fire bytes inside numbers, fire commands cut short or malformed.
            "X9F0.", "X90F.", "F", "F9", "F90X", "F1800.", "F-90.", "F 90.", "f90.", "FF.", "F.", "F\u{80}90.", "F9L", "F9\u{FF}0.",
        ]
        var sent = 0
        while sent < 100_000 {
            var chunk = (0..<10_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            chunk += Array(targeted.randomElement(using: &generator)!.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
            firmware.send(chunk)
            sent += chunk.count
            firmware.send(Array("X90.".utf8))
            firmware.wait(milliseconds: 40 - 4 / FirmwareSimulator.bytesPerSecond * 1000)
            let answer = try firmware.angles()
            #expect(answer.pan == 90, "no answer to X90. after \(sent) bytes: \(answer)")
            let stats = try firmware.stats()
            #expect(stats.minPulse >= 544 && stats.maxPulse <= 2400, "pulse \(stats.minPulse)–\(stats.maxPulse) µs")
        }
        // Every targeted string once more, each at an aim held long enough to fire at.
        for garbage in targeted {
            firmware.send(Array("X90.".utf8))
            firmware.wait(milliseconds: 300)
            firmware.send(Array(garbage.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }))
            firmware.wait(milliseconds: 60)
        }
        let trigger = try firmware.pulses()
        #expect(trigger.pulses.isEmpty && !trigger.isHigh, "the trigger rose: \(trigger.pulses)")
    }

    @Test("no slam at boot or reset: neither servo gets a pulse until the first command for its axis (X or L for pan, Y for tilt)")
    func servosLimpUntilTold() throws {
        let firmware = try FirmwareSimulator()
        // Every 100 ms for 2 s after setup(): a reset on every port open must not yank the horns to 90°.
        for _ in 0..<20 {
            let idle = try firmware.angles()
            #expect(!idle.panDriven && !idle.tiltDriven, "pulses before any command: \(idle)")
            firmware.wait(milliseconds: 100)
        }
        firmware.send(Array("X100.".utf8))
        firmware.wait(milliseconds: 25)
        let panned = try firmware.angles()
        #expect(panned.panDriven && panned.pan == 100 && !panned.tiltDriven, "\(panned)")
        firmware.send(Array("Y45.".utf8))
        firmware.wait(milliseconds: 25)
        let both = try firmware.angles()
        #expect(both.panDriven && both.tiltDriven && both.tilt == 45, "\(both)")

        // A reset (every port open resets an Uno) leaves both servos limp again, wherever they were.
        firmware.reboot()
        for _ in 0..<10 {
            let rebooted = try firmware.angles()
            #expect(!rebooted.panDriven && !rebooted.tiltDriven, "pulses after a reset, before any command: \(rebooted)")
            firmware.wait(milliseconds: 100)
        }

        let sweeping = try FirmwareSimulator()
        sweeping.send([UInt8(ascii: "L")])
        sweeping.wait(milliseconds: 100)
        let swept = try sweeping.angles()
        #expect(swept.panDriven && !swept.tiltDriven, "L drives the pan servo alone: \(swept)")
    }

    @Test("link timeout: newlines keep a sweep going; 5 s without a byte stops it where it is, and any command resumes")
    func linkTimeout() throws {
        let firmware = try FirmwareSimulator()
        firmware.send(Array("X30.L".utf8))
        // Keep-alives for 8 s: the sweep goes on.
        for _ in 0..<8 {
            let before = try firmware.angles().pan
            firmware.wait(milliseconds: 1000)
            firmware.send([0x0A])
            #expect(try firmware.angles().pan != before, "the sweep stopped despite keep-alives")
        }
        // Silence: still sweeping at 4.9 s, still by 5.1 s.
        firmware.wait(milliseconds: 4900)
        let late = try firmware.angles().pan
        firmware.wait(milliseconds: 50)
        #expect(try firmware.angles().pan != late, "stopped before the timeout")
        firmware.wait(milliseconds: 150)
        let stopped = try firmware.angles()
        firmware.wait(milliseconds: 1000)
        let held = try firmware.angles()
        #expect(held.pan == stopped.pan && held.panDriven, "not held after the timeout: \(stopped) then \(held)")
        // The host is back: a command works at once.
        firmware.send(Array("X70.".utf8))
        firmware.wait(milliseconds: 25)
        #expect(try firmware.angles().pan == 70)
    }

    @Test("a new aim reaches the timer within 2 ms of its '.', so the next 20 ms period carries it")
    func latency() throws {
        let firmware = try FirmwareSimulator()
        firmware.reset()
        for angle in [10, 170, 90, 45] {
            firmware.send(Array("X\(angle).".utf8))
            firmware.wait(milliseconds: 25)
            #expect(try firmware.angles().pan == angle)
        }
        let stats = try firmware.stats()
        #expect(stats.maxLatencyMicroseconds > 0 && stats.maxLatencyMicroseconds < 2000, "\(stats.maxLatencyMicroseconds) µs")
    }
}

/// A small deterministic generator (SplitMix64) so fuzz runs repeat.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
