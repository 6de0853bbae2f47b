import Testing
import TurretProtocol

/// Bytes and pauses from a fresh boot, and how many shots must come of them.
struct FireScenario: CustomTestStringConvertible, Sendable {
    enum Step: Sendable {
        /// Bytes (`\xNN` escapes allowed), one per byte time.
        case send(String)
        /// Seconds of silence.
        case wait(Double)
    }

    var name: String
    var steps: [Step]
    var shots: Int

    var testDescription: String { name }

    /// Runs the steps on the firmware in simavr and on the Swift controller,
    /// byte for byte at the same times.
    func run() throws -> (firmware: FirmwareSimulator.Pulses, swift: ServoController) {
        let firmware = try FirmwareSimulator()
        var swift = ServoController(linkTimeout: ServoController.bundledLinkTimeout)
        var time = 0.0
        for step in steps {
            switch step {
            case .send(let text):
                let bytes = ProtocolVector.unescape(text)
                firmware.send(bytes)
                for byte in bytes {
                    swift.receive(byte, at: time)
                    time += 1 / FirmwareSimulator.bytesPerSecond
                }
            case .wait(let seconds):
                firmware.wait(milliseconds: seconds * 1000)
                time += seconds
            }
        }
        // Let the last pulse end.
        firmware.wait(milliseconds: ServoController.firePulse * 1000 + 20)
        swift.advance(to: time + ServoController.firePulse + 0.02)
        return (try firmware.pulses(), swift)
    }
}

@Suite("The trigger: fires only at the aim it holds, settled, not sweeping, not too often — the firmware in simavr and the Swift controller alike")
struct FireTests {
    /// Longer than the settling time after a whole 180° of travel (the first
    /// aim after boot, when the servo may stand anywhere) and the fire window.
    static let settled = FireScenario.Step.wait(0.8)
    /// A second of silence and a newline, the keep-alive sentry sends, `count` times.
    static func keptAlive(seconds count: Int) -> [FireScenario.Step] {
        Array(repeating: [FireScenario.Step.wait(1), .send("\n")], count: count).flatMap { $0 }
    }

    static let scenarios: [FireScenario] = [
        FireScenario(name: "the aim held, settled: one shot", steps: [.send("X90."), settled, .send("F90.")], shots: 1),
        FireScenario(
            name: "8 s of keep-alives after the aim: a still face is still a target", steps: [.send("X120.")] + keptAlive(seconds: 8) + [.send("F120.")],
            shots: 1),
        FireScenario(
            name: "the host quiet for the link timeout: the aim is forgotten, F refused until a new X",
            steps: [.send("X120."), .wait(5.2), .send("F120."), .send("X120."), .wait(0.2), .send("F120.")], shots: 1),
        FireScenario(
            name: "a long move: refused until the horn can have arrived (100° at 0.2 s/60°) and stood 100 ms",
            steps: [.send("X40."), settled, .send("X140."), .wait(0.3), .send("F140."), .wait(0.2), .send("F140.")], shots: 1),
        FireScenario(
            name: "the first aim after boot counts a whole 180° of travel",
            steps: [.send("X90."), .wait(0.5), .send("F90."), .wait(0.25), .send("F90.")], shots: 1),
        FireScenario(name: "three digits are the same angle, as for X", steps: [.send("X90."), settled, .send("F090.")], shots: 1),
        FireScenario(name: "no aim since boot (the servo stands at 90 by itself): refused", steps: [.wait(1), .send("F90.")], shots: 0),
        FireScenario(name: "another angle than the one held: refused", steps: [.send("X90."), settled, .send("F91."), .send("F89."), .send("F0.")], shots: 0),
        FireScenario(name: "right after the aim changed: refused", steps: [.send("X90."), settled, .send("X100.F100.")], shots: 0),
        FireScenario(
            name: "while sweeping, at every angle of the sweep: refused",
            steps: [.send("X90."), settled, .send("L"), .wait(0.2)] + (20...160).map { .send("F\($0).") }, shots: 0),
        FireScenario(name: "after L, at the aim held before it: refused", steps: [.send("X90."), settled, .send("LF90.")], shots: 0),
        FireScenario(
            name: "a sweep stopped by Y alone is no aim: refused",
            steps: [.send("X90."), settled, .send("L"), .wait(0.5), .send("Y45."), settled] + (20...160).map { .send("F\($0).") }, shots: 0),
        FireScenario(
            name: "a fire command cut short, finished after a pause: refused",
            steps: [.send("X90."), settled, .send("F9"), .wait(1), .send("0."), .send("F"), .wait(0.08), .send("90.")], shots: 0),
        FireScenario(
            name: "fire bytes inside numbers and other garbage: refused",
            steps: [
                .send("X90."), settled, .send("X9F0.X90F.F9X90."), settled,
                .send("F1800.F-90.F 90.f90.FF.F.F\\x8090.F9L"), .send("X90."), settled, .send("F90X.F90Y.F9\\xff0."),
            ], shots: 0),
        FireScenario(
            name: "F does not stop a sweep, and once aimed, fires",
            steps: [.send("L"), .wait(0.2), .send("F50."), .wait(0.2), .send("X60."), settled, .send("F60.")], shots: 1),
        FireScenario(name: "a tilt aim that changes is settling too", steps: [.send("X90.Y90."), settled, .send("Y100.F90.")], shots: 0),
        FireScenario(
            name: "twice within the minimum interval: the second is refused; after it: fires",
            steps: [.send("X90."), settled, .send("F90."), .wait(0.5), .send("F90."), .wait(0.6), .send("F90.")], shots: 2),
    ]

    @Test("fire rules", arguments: scenarios)
    func rules(_ scenario: FireScenario) throws {
        let (firmware, swift) = try scenario.run()
        #expect(firmware.pulses.count == scenario.shots, "firmware: \(firmware.pulses)")
        #expect(swift.shots == scenario.shots, "Swift: \(swift.shots) shots, last refusal \(String(describing: swift.lastRefusal))")
        #expect(!firmware.isHigh)
    }

    @Test("pin 7 is never driven high from reset, through setup() and its READY, and the first aims, sweeps and garbage: only F fires")
    func triggerLowFromReset() throws {
        let firmware = try FirmwareSimulator()
        // The harness watches pin 7 from the first cycle: its boot (setup()) has run by the first reply.
        let booted = try firmware.pulses()
        #expect(booted.pulses.isEmpty && !booted.isHigh, "\(booted)")
        for (command, settle) in [("X90.", 300.0), ("L", 500), ("X100.", 300), ("Y80.", 300), ("F", 50), ("X4", 50), ("F9", 50), ("X90.", 800)] {
            firmware.send(Array(command.utf8))
            firmware.wait(milliseconds: settle)
            let now = try firmware.pulses()
            #expect(now.pulses.isEmpty && !now.isHigh, "after \(command): \(now)")
        }
        // The same board fires when told properly: the pin works, it was only never told.
        firmware.send(Array("F90.".utf8))
        firmware.wait(milliseconds: 200)
        #expect(try firmware.pulses().pulses.count == 1)
    }

    @Test("TRIGGER_PULSE_MS=250 builds a sketch whose shot is a 250 ms pulse")
    func pulseLengthIsABuildSetting() throws {
        let firmware = try FirmwareSimulator(elf: FirmwareSimulator.longPulseElf)
        firmware.send(Array("X90.".utf8))
        firmware.wait(milliseconds: 800)
        firmware.send(Array("F90.".utf8))
        firmware.wait(milliseconds: 400)
        let widths = try firmware.pulses().pulses.compactMap(\.width)
        #expect(widths.count == 1 && abs(widths[0] - 250) <= 2, "\(widths)")
    }

    @Test("a shot is a 100 ms pulse on pin 7, and F back to back fires once a second")
    func pulseWidthAndInterval() throws {
        // 720 fire commands back to back: 3.3 s at 4.6 ms each.
        let volley = FireScenario.Step.send(String(repeating: "F90.", count: 720))
        let scenario = FireScenario(name: "volley", steps: [.send("X90."), Self.settled, volley], shots: 4)
        let (firmware, swift) = try scenario.run()
        let widths = firmware.pulses.compactMap(\.width)
        let starts = firmware.pulses.map(\.start)
        let intervals = zip(starts.dropFirst(), starts).map { $0 - $1 }
        print("trigger pulses: widths \(widths.map { String(format: "%.2f", $0) }) ms, intervals \(intervals.map { String(format: "%.2f", $0) }) ms")
        #expect(widths.count == firmware.pulses.count)
        // millis() advances in steps of 1.024 ms (sometimes 2) on a 16 MHz
        // AVR, so a 100 ms pulse and a 1000 ms interval are exact to ±2 ms.
        #expect(widths.allSatisfy { abs($0 - 100) <= 2 }, "\(widths)")
        // The firmware's interval, to within millis() and one command (4.6 ms).
        #expect(intervals.allSatisfy { $0 >= 998 && $0 <= 1000 + 4.6 + 2 }, "\(intervals)")
        #expect(firmware.pulses.count == 4)
        #expect(swift.shots == 4)
    }
}
