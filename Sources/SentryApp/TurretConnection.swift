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
    let serialPort: SerialCommandOutput?

    static func open(_ options: RunOptions, simulator: SimulatedServo?, logger: Logger) throws -> TurretConnection {
        if let relay = try? RelayURL(parsing: options.serial) {
            return TurretConnection(output: try WebSocketCommandOutput(url: relay, logger: logger), serialPort: nil)
        }
        let port = try SerialCommandOutput(
            path: simulator?.devicePath ?? options.serial, baudRate: options.baudRate,
            bootWait: options.bootWait, relocate: options.findSerialPortAgain, logger: logger)
        return TurretConnection(output: port, serialPort: port)
    }

    func close() {
        serialPort?.close()
        (output as? WebSocketCommandOutput)?.close()
    }
}
