import Foundation
import Scratch
import TestClips

enum Scene {
    static let directory = ScratchDirectory.sharedFolder("scenes")

    /// The scene with the crop's top-left corner at (`left`, `top`).
    static func path(left: Int, top: Int = 250) -> String {
        let path = directory.appendingPathComponent("scene-\(left)-\(top).png").path
        if !FileManager.default.fileExists(atPath: path) {
            let process = Process()
            process.executableURL = DemoClip.repository.appendingPathComponent("tools/make-scene")
            process.arguments = [path, String(left), String(top)]
            try? process.run()
            process.waitUntilExit()
        }
        return path
    }

    /// The face's centre in servo degrees (see tools/make-scene).
    static func pan(left: Int) -> Double { 180 * (Double(left) + 144.5) / 1920 }
    static func tilt(top: Int) -> Double { 90 + (Double(top) + 113.5 - 360) * 180 / 1920 }
    /// The crop position that puts the face at `pan` degrees.
    static func left(forPan pan: Double) -> Int { Int((pan * 1920 / 180 - 144.5).rounded()) }
}
