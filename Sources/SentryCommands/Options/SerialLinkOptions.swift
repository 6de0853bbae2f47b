import ArgumentParser
import Relay
import SentryApp
import Serial
import Turret
import TurretLinks

/// The link to the turret: the port, its speed and boot wait, and the
/// parting command (`run`, `relay`).
struct SerialLinkOptions: ParsableArguments {
    @Option(
        help:
            "The Arduino's serial port (e.g. /dev/ttyACM0), 'auto' for the only one, 'sim' for the simulated servo, or (run only) ws://HOST:PORT[/?token=…] for a sentry relay elsewhere (default port 12354)."
    )
    var serial: String

    @Option(parsing: .unconditional, help: "Serial speed; must match the sketch.")
    var baud: Int = 9600

    @Option(
        parsing: .unconditional,
        help:
            "Seconds to wait after opening the port (an Uno resets on open); default 2 for devices, 0 for ptys and sim. A READY line from the board ends the wait early."
    )
    var bootWait: Double?

    @Option(
        help:
            "What the turret is told when sentry exits (and when a relay's controller leaves): hold (stand still where it is; a sweep stops), scan (L: sweep on), center (90°) or none."
    )
    var onExit: ExitCommand = .hold

    func validate() throws {
        guard !serial.isEmpty else { throw ValidationError("--serial needs a port path or 'sim'") }
        guard SerialPort.baudRates[baud] != nil else {
            throw ValidationError(
                "--baud \(baud) is not a standard rate; use one of \(SerialPort.baudRates.keys.sorted().map(String.init).joined(separator: ", "))")
        }
        if let bootWait, !(bootWait.isFinite && (0...60).contains(bootWait)) {
            throw ValidationError("--boot-wait \(bootWait) must be between 0 and 60 seconds")
        }
        if isRelay {
            do { _ = try RelayURL(parsing: serial) } catch { throw ValidationError("--serial \(error.description)") }
        }
    }

    /// `--serial ws://…`: a sentry relay rather than a port.
    var isRelay: Bool { serial.hasPrefix("ws") && serial.contains("://") }
}
