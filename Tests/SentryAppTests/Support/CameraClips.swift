import Detectors
import FaceDetection
import Foundation
import Geometry
import Imaging
import Logging
import SentryApp
import TestClips
import Testing
import Tracking
import Video

/// Clips a camera could have taken: the astronaut photo, still or drifting,
/// with a sensor's grain new in every frame (ffmpeg's temporal noise) and
/// H.264's compression on top, at 30 fps; played from a decoded copy (`Clips.makeDecoded`).
enum CameraClips {
    static let framesPerSecond = 30.0

    /// `seconds` of a 640x480 window over the photo's head and shoulders
    /// (the demo clip's part, x 80-330, y 0-300: no flag or model shuttle to
    /// fool a cascade) on a gray canvas, its left edge at `left(t)` pixels of
    /// the canvas; the face's centre is at x = 784.5 - left there.
    static func make(_ name: String, seconds: Double, left: String) -> String {
        let photo = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png").path
        return Clips.makeDecoded(
            name + ".mp4",
            [
                "-loop", "1", "-framerate", "30", "-t", String(seconds), "-i", photo,
                "-vf", "crop=250:300:80:0,pad=1280:480:640:90:color=0x808080,crop=640:480:x='\(left)':y=0,noise=alls=10:allf=t,format=yuv420p",
            ], codec: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "18"])
    }

    /// A face held still for 6 s; `shift` pixels (a sixth of a degree each)
    /// moves it across the boundary between two degrees from one clip to
    /// the next.
    static func still(shift: Int) -> String { make("still-\(shift)", seconds: 6, left: String(460 + shift)) }

    /// A face drifting left at 1° of pan a second (6.4 px/s on the default
    /// 100° mapping) for 6 s.
    static let drift = make("drift", seconds: 6, left: "440+6.4*t")
}

/// The detection modes and detectors a user gets without asking for one.
enum DefaultDetection: String, CaseIterable, CustomTestStringConvertible {
    case blazefaceEightPerSecond = "blazeface, --detect-fps 8 (the default)"
    case blazefaceEveryFrame = "blazeface, --detect-fps every"
    case haar = "haar, --detect-fps 8"
    case expressions = "blazeface, --expressions (the mesh follows the face)"

    var testDescription: String { rawValue }

    var options: DetectorOptions {
        var options = DetectorOptions()
        options.threads = 1
        options.detectRate = 8  // the command line's default
        switch self {
        case .blazefaceEightPerSecond: break
        case .blazefaceEveryFrame: options.detectRate = nil
        case .haar: options.kind = .haar
        case .expressions: options.expressions = true
        }
        return options
    }
}

/// Runs a clip through sentry in-process against the simulated servo, with
/// every default but those `configure` changes.
func runDefaults(
    _ clip: String, detection: DefaultDetection = .blazefaceEightPerSecond, realtime: Bool = false,
    configure: (inout RunOptions) -> Void = { _ in }
) throws -> Runner.Summary {
    var options = RunOptions(camera: clip, serial: simulatedSerialName)
    options.showStatus = false
    options.keepResults = true
    options.onExit = .none
    options.realtime = realtime
    options.detector = detection.options
    configure(&options)
    return try Runner.run(options, logger: Logger(label: "test"))
}

/// The pan aims that went on the wire, with their frame times.
func panAims(_ summary: Runner.Summary) -> [(time: Double, pan: Int)] {
    summary.results.flatMap { result in
        result.commands.compactMap { command in
            if case .pan(let pan) = command { (result.timestamp, pan) } else { nil }
        }
    }
}

/// How often a sequence of angles turns back.
func reversals(_ angles: [Int]) -> Int {
    var count = 0, direction = 0
    for (previous, next) in zip(angles, angles.dropFirst()) where next != previous {
        let step = next > previous ? 1 : -1
        if direction != 0, step != direction { count += 1 }
        direction = step
    }
    return count
}
