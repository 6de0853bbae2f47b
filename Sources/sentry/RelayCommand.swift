import ArgumentParser
import Devices
import Foundation
import Logging
import Relay
import SentryApp
import Serial
import ServoSim
import WebServing

/// `sentry relay`: the original app's Raspberry Pi server, in front of the turret's serial port.
struct RelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Serve the turret to a remote controller over WebSocket (the original app's ws://PI:12354), one controller at a time.",
        discussion: "Text messages of protocol commands (X90. Y45. L F90., several per message) go to the serial port; anything else is refused with a close code. Binds 127.0.0.1 unless told; any other address needs --token (or --insecure)."
    )

    @Option(help: "[HOST:]PORT to listen on; HOST an IPv4 address (0.0.0.0 for every interface).")
    var listen: String = "127.0.0.1:\(RelayServer.defaultPort)"

    @Option(help: "The Arduino's serial port, 'auto' for the only one, or 'sim' for the simulated servo.")
    var serial: String

    @Option(help: "A secret every connection must carry: ws://HOST:PORT/?token=TOKEN or Authorization: Bearer TOKEN.")
    var token: String?

    @Flag(help: "Allow anyone on the network to aim the turret without a token.")
    var insecure = false

    @Option(parsing: .unconditional, help: "Serial speed; must match the sketch.")
    var baud: Int = 9600

    @Option(parsing: .unconditional, help: "Seconds to wait after opening the port (an Uno resets on open); default 2 for devices, 0 for ptys.")
    var bootWait: Double?

    @Option(help: "What to send when the relay exits: scan (L), center (90°) or none.")
    var onExit: ExitCommand = .scan

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    /// `listen` as an address.
    var address: ListenAddress? { ListenAddress(parsing: listen) }

    func validate() throws {
        do {
            _ = try ListenAddress.checked(listen, token: token, insecure: insecure,
                                          flags: .init(address: "--listen", token: "--token", insecure: "--insecure", example: "127.0.0.1:12354"))
        } catch {
            throw ValidationError(error.description)
        }
        guard SerialPort.baudRates[baud] != nil else { throw ValidationError("--baud \(baud) is not a standard rate") }
        if let bootWait, !(bootWait.isFinite && (0...60).contains(bootWait)) {
            throw ValidationError("--boot-wait \(bootWait) must be between 0 and 60 seconds")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level \(logLevel) is not a level") }
    }

    func run() throws {
        let logger = makeLogger(level: logLevel)
        let serial = try failingCleanly { self.serial == "auto" ? try DeviceList.onlySerialPort() : self.serial }
        let simulator = serial == "sim" ? try failingCleanly { try SimulatedServo() } : nil
        defer { simulator?.stop() }
        let output = try failingCleanly {
            try SerialCommandOutput(path: simulator?.devicePath ?? serial, baudRate: baud, bootWait: bootWait, logger: logger)
        }
        defer { output.close() }
        let link = TurretLink(output: output, onExit: onExit.commands(tiltEnabled: true), logger: logger)
        defer { link.stop() }
        let address = address!
        let server = try failingCleanly {
            do {
                let server = try RelayServer(host: address.host, port: address.port, token: token, link: link, logger: logger)
                try server.start()
                return server
            } catch {
                throw RelayError("--listen \(listen): cannot listen (\(error)); is another relay running there? pick another port")
            }
        }
        StopSignal.install()
        FileHandle.standardError.write(Data("relay: ws://\(listen)/ → \(simulator?.devicePath ?? serial)\(token == nil ? "" : " (token required)")\n".utf8))
        while !StopSignal.isRequested { usleep(50_000) }
        server.stop()
        let counts = server.counts
        logger.notice("relay: \(counts.connections) connections, \(counts.messages) messages (\(counts.refused) refused), \(counts.turnedAway) second controllers turned away")
    }
}
