import CUdev
import FoundationEssentials
import Glibc
import MonotonicTime

/// Hotplug events from udev (or, with no udev daemon running, straight from
/// the kernel), for the subsystems asked for.
public final class DeviceMonitor {
    public struct Event: Sendable, Equatable {
        /// `add`, `remove`, `change`, …
        public var action: String
        public var subsystem: String
        /// The device node, when it has one.
        public var path: String?
    }

    private let udev: OpaquePointer
    private let monitor: OpaquePointer
    /// Pollable: readable when events are waiting.
    public let fileDescriptor: Int32

    /// `nil` when the system offers no device events.
    public init?(subsystems: [String]) {
        guard let udev = udev_new() else { return nil }
        // Events processed by udevd when it runs; else the kernel's own.
        let source = FileManager.default.fileExists(atPath: "/run/udev/control") ? "udev" : "kernel"
        guard let monitor = udev_monitor_new_from_netlink(udev, source) else {
            udev_unref(udev)
            return nil
        }
        for subsystem in subsystems { udev_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, nil) }
        guard udev_monitor_enable_receiving(monitor) == 0 else {
            udev_monitor_unref(monitor)
            udev_unref(udev)
            return nil
        }
        self.udev = udev
        self.monitor = monitor
        fileDescriptor = udev_monitor_get_fd(monitor)
    }

    deinit {
        udev_monitor_unref(monitor)
        udev_unref(udev)
    }

    /// The events that arrive within `timeout` seconds (all that are waiting
    /// once the first one is there; empty on time-out). Messages libudev
    /// filters out (other subsystems) do not end the wait.
    public func events(timeout: Double) -> [Event] {
        var events: [Event] = []
        let deadline = monotonicSeconds() + max(0, timeout)
        while true {
            let wait = events.isEmpty ? Int32(max(0, (deadline - monotonicSeconds()) * 1000).rounded(.up)) : 0
            var pollfd = Glibc.pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&pollfd, 1, wait) > 0 else { return events }
            guard let device = udev_monitor_receive_device(monitor) else { continue }
            defer { udev_device_unref(device) }
            events.append(
                Event(
                    action: udev_device_get_action(device).map { String(cString: $0) } ?? "",
                    subsystem: udev_device_get_subsystem(device).map { String(cString: $0) } ?? "",
                    path: udev_device_get_devnode(device).map { String(cString: $0) }))
        }
    }
}
