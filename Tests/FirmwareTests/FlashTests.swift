import Foundation
import Scratch
import SentryBinary
import Testing

/// Bytes by address from an Intel hex file (data, extended segment and
/// extended linear address records).
func intelHex(_ path: String) throws -> [Int: UInt8] {
    var memory: [Int: UInt8] = [:]
    var base = 0
    for line in try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline) where line.hasPrefix(":") {
        let bytes = stride(from: 1, to: line.count - 1, by: 2).compactMap { offset -> UInt8? in
            let start = line.index(line.startIndex, offsetBy: offset)
            return UInt8(line[start..<line.index(start, offsetBy: 2)], radix: 16)
        }
        guard bytes.count >= 5 else { throw SimulatorError("bad hex line \(line)") }
        let count = Int(bytes[0]), address = Int(bytes[1]) << 8 | Int(bytes[2]), type = bytes[3]
        let data = bytes[4..<(4 + count)]
        switch type {
        case 0: for (offset, byte) in data.enumerated() { memory[base + address + offset] = byte }
        case 2: base = (Int(data[data.startIndex]) << 8 | Int(data[data.startIndex + 1])) << 4
        case 4: base = (Int(data[data.startIndex]) << 8 | Int(data[data.startIndex + 1])) << 16
        default: break
        }
    }
    return memory
}

@Suite("Flashing with no board: sentry flash through Debian's Optiboot running in simavr")
struct FlashTests {
    static let optiboot = "/usr/share/arduino/hardware/arduino/avr/bootloaders/optiboot/optiboot_atmega328.hex"

    @Test("sentry flash writes the sketch, avrdude verifies it, the flash equals the hex, and the flashed image boots: READY, and X10. moves the servo")
    func flashesThroughOptiboot() throws {
        let scratch = try ScratchDirectory("flash")
        let dump = scratch.file("flash.bin").path
        // The bootloader alone behind a pty, held in reset until avrdude opens it.
        let board = Process()
        board.executableURL = URL(fileURLWithPath: FirmwareSimulator.harness)
        board.arguments = ["--bootloader", Self.optiboot, "--pty", "--dump-flash", dump]
        let boardOutput = Pipe()
        board.standardOutput = boardOutput
        board.standardError = FileHandle.nullDevice
        try board.run()
        defer { if board.isRunning { board.terminate() } }
        var text = ""
        while !text.contains("\n"), case let more = boardOutput.fileHandleForReading.availableData, !more.isEmpty {
            text += String(decoding: more, as: UTF8.self)
        }
        let pty = try #require(text.split(separator: "\n").first { $0.hasPrefix("pty ") }?.dropFirst(4))

        let flash = Process()
        flash.executableURL = URL(fileURLWithPath: SentryBinary.path)
        flash.arguments = ["flash", String(pty)]
        let flashOutput = Pipe()
        flash.standardOutput = flashOutput
        flash.standardError = flashOutput
        try flash.run()
        let said = String(decoding: flashOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        flash.waitUntilExit()
        #expect(flash.terminationStatus == 0, "\(said)")
        #expect(said.contains("bytes of flash verified"), "\(said)")
        board.waitUntilExit()

        // The simulated flash holds exactly the hex.
        let hex = try intelHex(FirmwareSimulator.repository.appendingPathComponent("firmware/sentry/build-uno/sentry.hex").path)
        let flashed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dump)))
        #expect(flashed.count == 32768 && hex.count > 2000)
        let differing = hex.filter { flashed[$0.key] != $0.value }.count
        #expect(differing == 0, "\(differing) of \(hex.count) bytes differ")

        // The flashed image runs (from address 0: Debian's 532-byte Optiboot
        // overflows the 512-byte boot section, see TOOLCHAIN-NOTES).
        let uart = scratch.file("uart.log").path
        let flashedBoard = try FirmwareSimulator(flashImage: dump, uartLog: uart)
        flashedBoard.wait(milliseconds: 100)
        #expect(try flashedBoard.angles().pan == 90)
        flashedBoard.send(Array("X10.".utf8))
        flashedBoard.wait(milliseconds: 30)
        #expect(try flashedBoard.angles().pan == 10)
        #expect(try String(contentsOfFile: uart, encoding: .utf8).contains("READY"))
    }
}
