import Foundation

/// The real firmware (`firmware/sentry`) running in simavr through
/// `tools/firmware-sim`, driven by a script over pipes.
final class FirmwareSimulator {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let elf = repository.appendingPathComponent("firmware/sentry/build-uno/sentry.elf").path
    /// The same sketch built with `TRIGGER_PULSE_MS=250` (`make -C firmware test-builds`).
    static let longPulseElf = repository.appendingPathComponent("firmware/sentry/build-pulse250/sentry.elf").path
    static let harness = repository.appendingPathComponent("tools/firmware-sim/firmware-sim").path

    /// Bytes per second as the harness feeds them: 9600 baud at the 11 bit
    /// times per byte that simavr's UART takes.
    static let bytesPerSecond = 9600.0 / 11

    struct Angles: Equatable {
        var panMicroseconds: Int
        var tiltMicroseconds: Int
        var pan: Int
        var tilt: Int
        var milliseconds: Double
        /// Whether each servo's pin carries pulses (a servo without them is limp).
        var panDriven: Bool
        var tiltDriven: Bool
    }

    struct Stats {
        var maxLatencyMicroseconds: Int
        var minPulse: Int
        var maxPulse: Int
    }

    /// The trigger pin's pulses: when each rose and how long it stayed high
    /// (`nil` while still high), in milliseconds of simulated time.
    struct Pulses {
        var pulses: [(start: Double, width: Double?)]
        var isHigh: Bool
    }

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = Data()

    /// The built sketch, or with `flashImage` a raw flash image run from
    /// address 0; the UART's output goes to `uartLog` when given.
    init(flashImage: String? = nil, uartLog: String? = nil, elf: String = FirmwareSimulator.elf) throws {
        for path in [elf, Self.harness] where !FileManager.default.isExecutableFile(atPath: path) && !FileManager.default.fileExists(atPath: path) {
            throw SimulatorError("missing \(path): run `make -C firmware` and `make -C tools/firmware-sim` (or `make test`)")
        }
        process.executableURL = URL(fileURLWithPath: Self.harness)
        process.arguments = flashImage.map { ["--flash-image", $0] } ?? [elf]
        process.standardInput = input
        process.standardOutput = output
        if let uartLog {
            _ = FileManager.default.createFile(atPath: uartLog, contents: nil)
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: uartLog))
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    func send(_ bytes: [UInt8]) {
        for start in stride(from: 0, to: bytes.count, by: 1000) {
            let chunk = bytes[start..<min(start + 1000, bytes.count)]
            write("send " + chunk.map { String(format: "%02x", $0) }.joined(separator: " "))
        }
    }

    func wait(milliseconds: Double) { write("wait \(milliseconds)") }

    func reset() { write("reset") }

    /// Resets the MCU, as an Uno's DTR does at every port open, and lets it boot.
    func reboot() { write("reboot") }

    func angles() throws -> Angles {
        write("angles")
        let f = try reply("angles").split(separator: " ")
        return Angles(
            panMicroseconds: Int(f[1])!, tiltMicroseconds: Int(f[2])!, pan: Int(f[3])!, tilt: Int(f[4])!, milliseconds: Double(f[5])!,
            panDriven: f[6] == "1", tiltDriven: f[7] == "1")
    }

    func stats() throws -> Stats {
        write("stats")
        let f = try reply("stats").split(separator: " ")
        return Stats(maxLatencyMicroseconds: Int(f[1])!, minPulse: Int(f[2])!, maxPulse: Int(f[3])!)
    }

    func pulses() throws -> Pulses {
        write("pulses")
        let f = try reply("pulses").split(separator: " ").dropFirst()
        let numbers = f.dropFirst(2).map { Double($0)! }
        let pulses = stride(from: 0, to: numbers.count, by: 2).map { i in
            (start: numbers[i], width: numbers[i + 1] < 0 ? nil : numbers[i + 1])
        }
        return Pulses(pulses: pulses, isHigh: f[f.startIndex + 1] == "1")
    }

    private func write(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// The next output line that starts with `word` (simavr prints other lines).
    private func reply(_ word: String) throws -> String {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[buffered.startIndex..<newline], as: UTF8.self)
                buffered.removeSubrange(buffered.startIndex...newline)
                if line.hasPrefix(word + " ") { return line }
                continue
            }
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { throw SimulatorError("firmware-sim ended without answering '\(word)'") }
            buffered.append(more)
        }
    }
}

struct SimulatorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One line of `Tests/Fixtures/protocol-vectors.txt`.
struct ProtocolVector: CustomStringConvertible {
    var bytes: [UInt8]
    var text: String
    var pan: Int
    var tilt: Int
    var sweeping: Bool

    var description: String { text }

    static func load() throws -> [ProtocolVector] {
        let url = FirmwareSimulator.repository.appendingPathComponent("Tests/Fixtures/protocol-vectors.txt")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), !line.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
            let fields = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count == 4, let pan = Int(fields[1]), let tilt = Int(fields[2]) else {
                throw SimulatorError("bad vector line: \(line)")
            }
            return ProtocolVector(bytes: unescape(fields[0]), text: fields[0], pan: pan, tilt: tilt, sweeping: fields[3] == "yes")
        }
    }

    /// `\xNN` escapes to bytes; everything else as ASCII.
    static func unescape(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = Substring(text)
        while let first = rest.first {
            if rest.hasPrefix("\\x"), let value = UInt8(rest.dropFirst(2).prefix(2), radix: 16) {
                bytes.append(value)
                rest = rest.dropFirst(4)
            } else {
                bytes.append(UInt8(ascii: first.unicodeScalars.first!))
                rest = rest.dropFirst()
            }
        }
        return bytes
    }
}
