import CV4L2
import FoundationEssentials
import Glibc

/// The few camera controls sentry exposes (`--gain`, `--exposure`, their
/// automatic modes). `nil` leaves a control as the camera has it.
public struct CameraControls: Sendable, Equatable {
    public var gain: Int?
    public var autoGain: Bool?
    public var exposure: Int?
    public var autoExposure: Bool?

    public init(gain: Int? = nil, autoGain: Bool? = nil, exposure: Int? = nil, autoExposure: Bool? = nil) {
        self.gain = gain
        self.autoGain = autoGain
        self.exposure = exposure
        self.autoExposure = autoExposure
    }

    /// One control as the device describes it.
    public struct Control: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        public var minimum: Int
        public var maximum: Int
        public var value: Int
        let id: UInt32

        public var description: String { "\(name) \(value) (\(minimum)–\(maximum))" }
    }

    /// Control ids by the name sentry uses for them. Auto exposure is a menu:
    /// 1 manual, 3 aperture priority (automatic).
    static let known: [(name: String, id: UInt32)] = [
        ("gain", SENTRY_CID_GAIN), ("auto-gain", SENTRY_CID_AUTOGAIN),
        ("exposure", SENTRY_CID_EXPOSURE_ABSOLUTE), ("auto-exposure", SENTRY_CID_EXPOSURE_AUTO),
    ]

    /// The known controls the device has, with their ranges and values.
    static func available(fd: Int32) -> [Control] {
        known.compactMap { name, id in
            var query = v4l2_queryctrl()
            query.id = id
            guard sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_QUERYCTRL, &query) == 0,
                query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0
            else { return nil }
            var control = v4l2_control()
            control.id = id
            _ = sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_G_CTRL, &control)
            return Control(name: name, minimum: Int(query.minimum), maximum: Int(query.maximum), value: Int(control.value), id: id)
        }
    }

    /// Sets the requested controls; a control the camera lacks, or a value
    /// outside its range, is an error that names both.
    func apply(fd: Int32, path: String) throws(VideoError) {
        let requested: [(String, Int?)] = [
            ("auto-gain", autoGain.map { $0 ? 1 : 0 }), ("gain", gain),
            ("auto-exposure", autoExposure.map { $0 ? 3 : 1 }), ("exposure", exposure),
        ]
        let available = Self.available(fd: fd)
        for case let (name, value?) in requested {
            guard let control = available.first(where: { $0.name == name }) else {
                let has = available.map(\.name).joined(separator: ", ")
                throw VideoError(source: path, reason: "has no \(name) control", hint: "drop --\(name); it has: \(has.isEmpty ? "none of gain/exposure" : has)")
            }
            guard (control.minimum...control.maximum).contains(value) else {
                throw VideoError(source: path, reason: "\(name) \(value) is outside \(control.minimum)–\(control.maximum)", hint: "pass a value in that range")
            }
            var setting = v4l2_control()
            setting.id = control.id
            setting.value = Int32(value)
            guard sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_S_CTRL, &setting) == 0 else {
                throw VideoError(
                    source: path, reason: "cannot set \(name) (\(String(cString: strerror(errno))))",
                    hint: "an automatic mode may be on; turn it off with --auto-\(name.replacing("auto-", with: "")) off")
            }
        }
    }
}
