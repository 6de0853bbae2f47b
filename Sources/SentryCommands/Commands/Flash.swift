import ArgumentParser
import ChildProcesses
import Devices
import ModelFiles
import FoundationEssentials
import Glibc
import TextOutput

/// `sentry flash PORT`: the bundled sketch onto an Uno or Nano through its
/// bootloader, with avrdude (verified after writing).
struct Flash: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the bundled firmware to an Arduino Uno or Nano with avrdude, and verify it.",
        discussion:
            "Uses the board's bootloader over USB: Optiboot at 115200 baud (Uno, newer Nanos), or --old-bootloader at 57600 (older Nanos). Stop a running sentry first: the port must be free."
    )

    @Argument(help: "The board's serial port: /dev/ttyACM0, /dev/sentry-turret, or 'auto' for the only one.")
    var port: String

    @Option(help: "The Intel hex file to write (default: the installed firmware, else the checkout's build).")
    var hex: String?

    @Flag(help: "The old Nano bootloader (ATmegaBOOT, 57600 baud).")
    var oldBootloader = false

    /// Where the firmware hex is: installed, else built in the checkout.
    static func defaultHex() -> String? {
        [
            Installation.shareDirectory.map { $0 + "/firmware/sentry.hex" },
            Installation.checkout.map { $0 + "/firmware/sentry/build-uno/sentry.hex" },
        ]
        .compactMap { $0 }.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    func run() throws {
        let port = try failingCleanly { self.port == "auto" ? try DeviceList.onlySerialPort() : self.port }
        try failingCleanly { try check(port: port) }
        guard let hex = hex ?? Self.defaultHex() else {
            throw fail(
                "no firmware hex found; in a checkout, make flash PORT=\(port) builds and writes it (tools/setup firmware installs the AVR toolchain), or pass --hex FILE")
        }
        guard FileManager.default.isReadableFile(atPath: hex) else { throw fail("firmware \(hex): no such file or not readable; pass --hex FILE") }
        guard let avrdude = ["/usr/bin/avrdude", "/usr/local/bin/avrdude"].first(where: FileManager.default.isExecutableFile) else {
            throw fail("avrdude not found; install it with sudo apt install avrdude")
        }
        let arguments = [
            "-p", "atmega328p", "-c", "arduino", "-P", port, "-b", oldBootloader ? "57600" : "115200", "-D",
            "-U", "flash:w:\(hex):i",
        ]
        // avrdude's progress and complaints go to the user's terminal, as when run by hand.
        let avrdudeRun: ChildProcess
        do {
            avrdudeRun = try ChildProcess(avrdude, arguments: arguments, output: .standardError, error: .standardError)
        } catch {
            throw fail("\(error); reinstall avrdude with sudo apt install --reinstall avrdude")
        }
        let ending = avrdudeRun.wait()
        guard ending?.succeeded == true else {
            throw fail(
                "flashing \(port) failed (avrdude \(ending.map { "\($0)" } ?? "ended")): check that it is an Uno or Nano, that no program holds the port, and try --old-bootloader for an older Nano"
            )
        }
        print("sentry: flashed \(hex) to \(port); the board restarts and prints READY")
    }

    private func check(port: String) throws {
        var info = stat()
        guard stat(port, &info) == 0 else { throw FlashError("serial port \(port): no such device; plug in the board (sentry devices lists ports)") }
        guard (info.st_mode & S_IFMT) == S_IFCHR else { throw FlashError("serial port \(port): not a serial port; pass the board's tty, e.g. /dev/ttyACM0") }
    }

    private func fail(_ message: String) -> ExitCode {
        StandardStream.writeError("sentry: \(message)\n")
        return ExitCode.failure
    }
}

struct FlashError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
