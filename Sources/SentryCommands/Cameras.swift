import Devices
import Video

/// The cameras on this machine: udev's video nodes (`Devices`) that open as
/// capture devices (`Video`).
extension DeviceList {
    static func cameras() -> [V4L2Camera.Description] {
        videoNodes().compactMap(V4L2Camera.describe)
    }

    /// The single camera there is, for `--camera auto`.
    static func onlyCamera() throws(DeviceChoiceError) -> String {
        let all = cameras()
        guard all.count == 1 else {
            throw DeviceChoiceError(
                description: all.isEmpty
                    ? "--camera auto: no camera found; plug one in, or pass a video file"
                    : "--camera auto: \(all.count) cameras (\(all.map { "\($0.path) \($0.card)" }.joined(separator: ", "))); pass one with --camera")
        }
        return all[0].path
    }
}
