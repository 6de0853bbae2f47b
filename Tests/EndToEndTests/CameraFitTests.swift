import Foundation
import Scratch
import TestClips
import Testing

/// The aim as a maker's own camera needs it (issue 72, item 8): a field of
/// view that sets the frame's span, and a picture turned before detection.
@Suite("the aim fits the camera: --fov spans the frame, --rotate and --mirror turn the picture")
struct CameraFitTests {
    static let astronaut = DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png").path

    /// The `sent X… Y…` of the one frame's `--track` line for a run on `photo`.
    static func sent(_ photo: String, _ arguments: [String]) throws -> String {
        let run = try SentryProcess(["--camera", photo, "--serial", "sim", "--frames", "1", "--quiet", "--tilt", "--track"] + arguments)
        #expect(run.status == 0, "\(run.standardError)")
        return run.standardOutput.firstMatch(of: #/sent ([^ ]+(?: Y\d+\.)?)/#).map { String($0.1) } ?? run.standardOutput
    }

    @Test("the astronaut's face (226,122 of 512x512) is X84. Y63. by SPEC §2's offset 40, X86. Y74. with --fov 60: 60° across the frame, the same degrees per pixel down it")
    func fieldOfView() throws {
        #expect(try Self.sent(Self.astronaut, []) == "X84. Y63.")
        // 90 + (226 - 256) * 60 / 512 = 86.5, 90 + (122 - 256) * 60 / 512 = 74.3
        #expect(try Self.sent(Self.astronaut, ["--fov", "60"]) == "X86. Y74.")
        let config = try SentryProcess(["config", "--fov", "60"])
        #expect(config.standardOutput.split(separator: "\n").contains { $0.hasPrefix("fov ") && $0.contains("60") && $0.contains("flag") })
    }

    @Test("a camera upside down (the photo turned half round) aims as upright with --rotate 180; a mirrored one with --mirror; any other turn is refused")
    func turnedPicture() throws {
        let scratch = try ScratchDirectory("camera-fit")
        for (name, filter, flags) in [("upside-down.png", "hflip,vflip", ["--rotate", "180"]), ("mirrored.png", "hflip", ["--mirror"])] {
            let turned = scratch.file(name).path
            let ffmpeg = try SentryProcess(program: "/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", Self.astronaut, "-vf", filter, turned])
            #expect(ffmpeg.status == 0, "\(ffmpeg.standardError)")
            #expect(try Self.sent(turned, flags) == "X84. Y63.", "\(name) \(flags)")
        }
        let quarter = try SentryProcess(["--camera", Self.astronaut, "--serial", "sim", "--rotate", "90"])
        #expect(quarter.status != 0 && quarter.standardError.contains("--rotate 90"), "\(quarter.standardError)")
    }
}
