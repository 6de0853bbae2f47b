import ArgumentParser
import Devices
import FoundationEssentials
import Imaging
import MonotonicTime
import SentryApp
import TextOutput
import Video

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List cameras and serial ports (likely Arduinos marked).")

    @Option(parsing: .unconditional, help: "Then print cameras and serial ports plugged in or out for this many seconds.")
    var watch: Double?

    func validate() throws {
        if let watch, !(watch.isFinite && watch > 0) { throw ValidationError("--watch \(watch) must be a positive number of seconds") }
    }

    func run() throws {
        list()
        guard let watch else { return }
        guard let monitor = DeviceMonitor(subsystems: ["video4linux", "tty"]) else {
            StandardStream.writeError("sentry: devices --watch: this system gives no device events (no netlink access)\n")
            throw ExitCode.failure
        }
        print("watching for \(watch) s:")
        StopSignal.install()
        let end = monotonicSeconds() + watch
        while !StopSignal.isRequested, monotonicSeconds() < end {
            for event in monitor.events(timeout: min(0.5, max(0, end - monotonicSeconds()))) {
                print("  \(event.action) \(event.subsystem) \(event.path ?? "(no node)")")
            }
        }
    }

    func list() {
        let cameras = DeviceList.cameras()
        print("cameras:")
        if cameras.isEmpty { print("  none (is the camera plugged in? are you in the video group?)") }
        for camera in cameras {
            print("  \(camera.path)  \(camera.card)  [driver \(camera.driver)]")
            for format in camera.formats {
                let sizes: String
                switch format.sizes {
                case .discrete(let list): sizes = list.map(\.description).joined(separator: " ")
                case .stepwise(let low, let high, _): sizes = "\(low) to \(high)"
                }
                print("      \(format.fourcc)\(format.emulated ? " (via libv4l)" : "")  \(sizes)")
            }
            if !camera.controls.isEmpty {
                print("      controls: \(camera.controls.map(\.description).joined(separator: ", "))")
            }
        }
        print("serial ports:")
        let ports = DeviceList.serialPorts()
        if ports.isEmpty { print("  none (plug in the Arduino; or use --serial sim)") }
        for port in ports {
            let usb = port.vendorID.map { " USB \($0):\(port.productID ?? "????")" } ?? ""
            let chip = port.vendorID.flatMap { SerialDevice.arduinoVendors[$0] }.map { "  likely Arduino (\($0))" } ?? ""
            print("  \(port.path)\(usb) \(port.product ?? "")\(chip)")
            if let stable = port.stableName { print("      \(stable)") }
        }
    }
}
