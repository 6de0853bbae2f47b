import ArgumentParser
import Devices
import FoundationEssentials
import Logging
import Relay
import SentryApp
import Serial
import ServoSim
import TurretLinks
import WebServing
import TextOutput

/// `sentry relay`: the original app's Raspberry Pi server, in front of the turret's serial port.
struct RelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Serve the turret to a remote controller over WebSocket (the original app's ws://PI:12354), one controller at a time.",
        discussion:
            "Text messages of protocol commands (X90. Y45. L F90., several per message) go to the serial port; anything else is refused with a close code. Binds 127.0.0.1 unless told; any other address needs --token (or --insecure)."
    )

    @OptionGroup var listenOptions: ListenOptions

    @OptionGroup var link: SerialLinkOptions

    @Flag(
        help:
            "Pass fire commands (F<deg>.) from the controller to the turret. Without it the relay refuses every message that holds one: a shot needs --fire on the process that writes to the turret (docs/guide/safety.md)."
    )
    var fire = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    func validate() throws {
        guard !link.isRelay else { throw ValidationError("--serial \(link.serial): the relay drives a serial port; give the Arduino's port or 'sim'") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level \(logLevel) is not a level") }
    }

    func run() throws {
        let logger = makeLogger(level: logLevel)
        let serial = try failingCleanly { link.serial == "auto" ? try DeviceList.onlySerialPort() : link.serial }
        let simulator = serial == "sim" ? try failingCleanly { try SimulatedServo() } : nil
        defer { simulator?.stop() }
        let output = try failingCleanly {
            try SerialCommandOutput(path: simulator?.devicePath ?? serial, baudRate: link.baud, bootWait: link.bootWait, logger: logger)
        }
        defer { output.close() }
        let turretLink = TurretLink(output: output, onExit: link.onExit, logger: logger)
        defer { turretLink.stop() }
        let address = listenOptions.address!, token = listenOptions.token, listen = listenOptions.listen
        let server = RelayServer(
            address: address, token: token, rules: listenOptions.siteRules, maximumClients: listenOptions.maxClients, armed: fire, link: turretLink,
            logger: logger)
        try failingCleanly {
            do {
                try server.start()
            } catch {
                throw RelayError("--listen \(listen): cannot listen (\(error)); is another relay running there? pick another port")
            }
        }
        StopSignal.install()
        StandardStream.writeError(
            "relay: ws://\(server.listening)/ → \(simulator?.devicePath ?? serial)\(token == nil ? "" : " (token required)")\(fire ? "; ARMED: fire commands pass (--fire)" : "; fire commands refused (no --fire)")\n")
        while !StopSignal.wait() {}
        server.stop()
        let counts = server.counts
        logger.notice(
            "relay: \(counts.connections) connections, \(counts.messages) messages (\(counts.refused) refused), \(counts.turnedAway) second controllers turned away"
        )
    }
}
