import CUdev
import FoundationEssentials

/// A serial port that may be an Arduino.
public struct SerialDevice: Sendable, Equatable {
    public var path: String
    /// The stable name under `/dev/serial/by-id/`, when udev made one.
    public var stableName: String?
    public var vendorID: String?
    public var productID: String?
    public var product: String?

    /// The USB-serial chips found on Arduinos and their clones.
    public static let arduinoVendors: [String: String] = [
        "2341": "Arduino", "2a03": "Arduino", "1a86": "CH340", "0403": "FTDI", "10c4": "CP210x",
    ]

    public var likelyArduino: Bool { vendorID.map { Self.arduinoVendors[$0] != nil } ?? false }
}

/// The cameras and serial ports on this machine, found through libudev
/// (which reads sysfs, so it works without a udev daemon too).
public enum DeviceList {
    /// Every `/dev/video*` node (not touch sensors, radios or VBI): cameras,
    /// and output and metadata nodes, which only opening one tells apart
    /// (`Video`'s business, not this module's).
    public static func videoNodes() -> [String] {
        devices(subsystem: "video4linux").map(\.path).filter { URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("video") }
    }

    /// USB serial ports (`ttyACM*`, `ttyUSB*` and any tty on a USB device).
    public static func serialPorts() -> [SerialDevice] {
        let stableNames = links(in: "/dev/serial/by-id")
        return devices(subsystem: "tty").compactMap { device in
            let name = URL(fileURLWithPath: device.path).lastPathComponent
            guard device.usbVendor != nil || name.hasPrefix("ttyACM") || name.hasPrefix("ttyUSB") else { return nil }
            return SerialDevice(
                path: device.path, stableName: stableNames[device.path], vendorID: device.usbVendor,
                productID: device.usbProduct, product: device.usbName)
        }
    }

    struct Node {
        var path: String
        var usbVendor: String?
        var usbProduct: String?
        var usbName: String?
    }

    static func devices(subsystem: String) -> [Node] {
        guard let udev = udev_new() else { return [] }
        defer { udev_unref(udev) }
        guard let enumerate = udev_enumerate_new(udev) else { return [] }
        defer { udev_enumerate_unref(enumerate) }
        udev_enumerate_add_match_subsystem(enumerate, subsystem)
        udev_enumerate_scan_devices(enumerate)
        var nodes: [Node] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            defer { entry = udev_list_entry_get_next(current) }
            guard let syspath = udev_list_entry_get_name(current),
                let device = udev_device_new_from_syspath(udev, syspath)
            else { continue }
            defer { udev_device_unref(device) }
            guard let node = udev_device_get_devnode(device) else { continue }
            let usb = udev_device_get_parent_with_subsystem_devtype(device, "usb", "usb_device")
            func attribute(_ name: String) -> String? { usb.flatMap { udev_device_get_sysattr_value($0, name) }.map { String(cString: $0) } }
            nodes.append(
                Node(
                    path: String(cString: node), usbVendor: attribute("idVendor"),
                    usbProduct: attribute("idProduct"), usbName: attribute("product")))
        }
        return nodes.sorted { naturallyBefore($0.path, $1.path) }
    }

    /// `/dev/video2` before `/dev/video10`: by the name without its number, then by the number.
    static func naturallyBefore(_ first: String, _ second: String) -> Bool {
        func split(_ path: String) -> (String, Int) {
            let digits = path.reversed().prefix { $0.isASCII && $0.isNumber }
            return (String(path.dropLast(digits.count)), Int(String(digits.reversed())) ?? -1)
        }
        let (a, b) = (split(first), split(second))
        return a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
    }

    /// Symlinks in `directory`, keyed by the device they point to.
    static func links(in directory: String) -> [String: String] {
        var result: [String: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let link = "\(directory)/\(name)"
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link) {
                result[URL(fileURLWithPath: target, relativeTo: URL(fileURLWithPath: directory + "/")).standardizedFileURL.path] = link
            }
        }
        return result
    }
}

/// Why `auto` could not pick a device.
public struct DeviceChoiceError: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

extension DeviceList {
    /// The single likely Arduino (or the single USB serial port), for `--serial auto`.
    public static func onlySerialPort() throws(DeviceChoiceError) -> String {
        let ports = serialPorts()
        let arduinos = ports.filter(\.likelyArduino)
        let candidates = arduinos.isEmpty ? ports : arduinos
        guard candidates.count == 1 else {
            throw DeviceChoiceError(
                description: candidates.isEmpty
                    ? "--serial auto: no USB serial port found; plug in the Arduino, or use --serial sim"
                    : "--serial auto: \(candidates.count) candidates (\(candidates.map(\.path).joined(separator: ", "))); pass one with --serial")
        }
        return candidates[0].stableName ?? candidates[0].path
    }
}

extension DeviceList {
    /// For `--serial auto`: finds the board at `path` again after a replug,
    /// which may give it another name (`ttyUSB0` comes back as `ttyUSB1` while
    /// anything still holds the old node). By its `/dev/serial/by-id/` name
    /// when udev made one, else as the only port with its USB vendor and
    /// product. `nil` when `path` is not a USB serial port.
    public static func finder(for path: String) -> (@Sendable () -> String?)? {
        guard let board = serialPorts().first(where: { $0.path == path }), board.vendorID != nil else { return nil }
        return {
            let ports = serialPorts()
            if let stableName = board.stableName, let found = ports.first(where: { $0.stableName == stableName }) {
                return found.path
            }
            let alike = ports.filter { $0.vendorID == board.vendorID && $0.productID == board.productID }
            return alike.count == 1 ? alike[0].path : nil
        }
    }
}
