import Logging
import Relay
import Serial
import ServoSim
import TurretLinks

/// The link `--serial` names: a relay (`ws://…`), or a serial port (the
/// simulated servo's pseudo-terminal for `sim`).
struct TurretConnection {
    let output: any CommandOutput
    /// The serial port, when the link is one (hot-plug watches it).
    var serialPort: SerialCommandOutput? = nil
    /// The relay, when the link is one.
    var relay: WebSocketCommandOutput? = nil

    static func open(_ options: RunOptions, simulator: SimulatedServo?, logger: Logger) throws -> TurretConnection {
        if let relay = try? RelayURL(parsing: options.serial) {
            let relay = try WebSocketCommandOutput(url: relay, logger: logger)
            return TurretConnection(output: relay, relay: relay)
        }
        let port = try SerialCommandOutput(
            path: simulator?.devicePath ?? options.serial, baudRate: options.baudRate,
            bootWait: options.bootWait, relocate: options.findSerialPortAgain, logger: logger)
        return TurretConnection(output: port, serialPort: port)
    }

    func close() {
        serialPort?.close()
        relay?.close()
    }
}
