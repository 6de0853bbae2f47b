import Foundation

/// The demo clip made by `tools/make-demo-clip` and the face path it encodes.
public enum DemoClip {
    /// The checkout: the folder above this file that holds Package.swift.
    public static let repository: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path), url.path != "/" {
            url.deleteLastPathComponent()
        }
        return url
    }()

    /// The clip, made once per checkout (`ClipCache`) as sentry ships it (FFV1) and
    /// played from its decoded copy, the same frames byte for byte: the tests play
    /// it a few hundred times.
    public static let path: String = {
        ClipCache.decoded(
            ClipCache.clip(
                "demo.mkv", command: [repository.appendingPathComponent("tools/make-demo-clip").path],
                reads: [repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png").path]))
    }()

    public static let frameWidth = 640, frameHeight = 480
    public static let framesPerSecond = 10.0

    /// Where the window over the canvas is at time `t` (see tools/make-demo-clip).
    public static func window(at t: Double) -> (x: Double, y: Double) {
        (300 + 140 * min(t, 10 - t), 16 + 16 * sin(1.3 * t))
    }

    /// The face's box in the frame at time `t`: the 95x95 box OpenCV finds at
    /// (177, 66) in the photo, which sits at x = 640 on the canvas.
    public static func face(at t: Double) -> (x: Double, y: Double, width: Double, height: Double) {
        let w = window(at: t)
        return (640 + 177 - w.x, 66 - w.y, 95, 95)
    }

    public static func faceCenter(at t: Double) -> (x: Double, y: Double) {
        let f = face(at: t)
        return (f.x + f.width / 2, f.y + f.height / 2)
    }

    public static func faceFullyInside(at t: Double) -> Bool {
        let f = face(at: t)
        return f.x >= 0 && f.x + f.width <= Double(frameWidth) && f.y >= 0 && f.y + f.height <= Double(frameHeight)
    }

    public static func faceFullyOutside(at t: Double) -> Bool {
        let f = face(at: t)
        return f.x + f.width <= 0 || f.x >= Double(frameWidth)
    }
}
