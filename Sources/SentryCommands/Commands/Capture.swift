import ArgumentParser
import Devices
import EventPictures
import Imaging
import SentryApp
import TextOutput
import Video

struct Capture: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Capture frames from a camera and report size, format, rate and drops (no detection).")

    @Option(help: "The camera, e.g. /dev/video0, or 'auto'.")
    var camera: String

    @Option(parsing: .unconditional, help: "How many frames.")
    var frames: Int = 60

    @Option(
        help: ArgumentHelp(
            "Save the last frame as a still of your scene, JPEG or PNG by the name, to try detection (sentry faces) and calibration on.",
            valueName: "file"), completion: .file(extensions: EventPicture.fileExtensions))
    var save: String?

    @OptionGroup var capture: CameraOptions

    func validate() throws {
        guard (1...100_000).contains(frames) else { throw ValidationError("--frames \(frames) must be between 1 and 100000") }
        if let save, !EventPicture.fileExtensions.contains(where: { save.lowercased().hasSuffix("." + $0) }) {
            throw ValidationError("--save \(save): name a .jpg or .png file, e.g. --save scene.jpg")
        }
    }

    func run() throws {
        try failingCleanly {
            let path = camera == "auto" ? try DeviceList.onlyCamera() : camera
            let source = try Runner.openCamera(
                path, size: capture.frameSize, realtime: false,
                framesPerSecond: capture.fps, pixelFormat: capture.pixelFormat, colour: save != nil,
                controls: capture.controls, orientation: capture.orientation)
            defer { source.close() }
            var count = 0, first = 0.0, last = 0.0, mean = 0.0
            var newest: Frame?
            while count < frames, let frame = try source.nextFrame() {
                if save != nil { newest = frame }
                if count == 0 { first = frame.timestamp }
                last = frame.timestamp
                mean += Double(frame.image.pixels.reduce(0) { $0 + Int($1) }) / Double(max(1, frame.image.pixels.count))
                count += 1
            }
            let measured = count > 1 && last > first ? Double(count - 1) / (last - first) : 0
            let format = (source as? V4L2Camera)?.fourcc ?? "file"
            let dropped = (source as? V4L2Camera)?.droppedFrames ?? 0
            for note in (source as? V4L2Camera)?.notes ?? [] { print("note: \(note)") }
            print(
                "captured \(count) frames \(source.width)x\(source.height) \(format) "
                    + String(
                        printf: "nominal %.1f fps measured %.1f fps dropped %d mean-luma %.0f",
                        source.framesPerSecond, measured, dropped, mean / Double(max(1, count))))
            if let save, let newest {
                do {
                    try EventPicture.save(newest, to: save)
                } catch {
                    throw ValidationError("--save \(save): \((error as? VideoError)?.reason ?? "\(error)"); pass a file in a folder you may write")
                }
                print("saved frame \(count) to \(save)")
            }
        }
    }
}
