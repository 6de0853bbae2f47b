import ArgumentParser
import Imaging
import Video

/// How a camera is opened: size, rate, pixel format and its controls
/// (`run`, `bench`, `capture`).
struct CameraOptions: ParsableArguments {
    @Option(help: "Frame size WxH, e.g. 640x480: files are rescaled, cameras use their nearest size.")
    var size: String?

    @Option(
        parsing: .unconditional,
        help: "Frame rate: a camera's (it takes its nearest), or the virtual camera's clock (default 30). A video file plays at its own rate (--realtime paces it).")
    var fps: Double?

    @Option(help: "Camera pixel format: GREY, YUYV, YU12, YV12 or NV12 (default: a colour one for BlazeFace, GREY for the cascades).")
    var pixelFormat: String?

    @Option(parsing: .unconditional, help: "Camera gain (see `sentry devices` for the range).")
    var gain: Int?

    @Option(help: "Camera automatic gain: on or off.")
    var autoGain: Switch?

    @Option(parsing: .unconditional, help: "Camera exposure (absolute; see `sentry devices`).")
    var exposure: Int?

    @Option(help: "Camera automatic exposure: on or off.")
    var autoExposure: Switch?

    @Option(
        parsing: .unconditional,
        help: "Turn the picture before anything reads it: 180 for a camera mounted upside down (0: as it comes; --invert-x/--invert-y reverse the servos instead).")
    var rotate: Int = 0

    @Flag(inversion: .prefixedNo, help: "Mirror the picture left to right, for a camera that shows the room mirrored.")
    var mirror = false

    var orientation: FrameOrientation { FrameOrientation(upsideDown: rotate == 180, mirrored: mirror) }

    var controls: CameraControls {
        CameraControls(gain: gain, autoGain: autoGain.map { $0 == .on }, exposure: exposure, autoExposure: autoExposure.map { $0 == .on })
    }

    var frameSize: FrameSize? { size.flatMap(FrameSize.init(parsing:)) }

    func validate() throws {
        guard rotate == 0 || rotate == 180 else {
            throw ValidationError("--rotate \(rotate): a camera is turned 0 or 180 degrees (upside down); for a quarter turn, mount it level")
        }
        if let fps, !(fps.isFinite && (1...240).contains(fps)) {
            throw ValidationError("--fps \(fps) must be between 1 and 240")
        }
        if let pixelFormat, !FormatNegotiation.preferredFourccs.contains(pixelFormat) {
            throw ValidationError("--pixel-format \(pixelFormat) is not one of \(FormatNegotiation.preferredFourccs.joined(separator: ", "))")
        }
        if let size, FrameSize(parsing: size) == nil {
            throw ValidationError("--size \(size) must be WIDTHxHEIGHT with both between 16 and 8192, e.g. 640x480")
        }
    }
}
