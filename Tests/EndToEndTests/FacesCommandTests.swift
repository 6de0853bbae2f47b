import Foundation
import Scratch
import TestClips
import Testing

/// `sentry faces` as a user runs it: JSON lines, drawings, bad files.
@Suite("sentry faces")
struct FacesCommandTests {
    static let photos = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/photos")
    static let astronaut = photos.appendingPathComponent("astronaut.png").path
    static let coffee = photos.appendingPathComponent("coffee.png").path

    static func objects(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("--json prints one object per image in the order given: 478 points, six scores, pose and gaze; no face is not an error")
    func json() throws {
        let run = try SentryProcess(["faces", "--json", Self.coffee, Self.astronaut])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = try Self.objects(run.standardOutput)
        try #require(lines.count == 2)
        #expect(lines[0]["file"] as? String == Self.coffee && (lines[0]["faces"] as? [Any])?.isEmpty == true)
        #expect(lines[1]["file"] as? String == Self.astronaut && lines[1]["width"] as? Int == 512)
        let face = try #require((lines[1]["faces"] as? [[String: Any]])?.first)
        let landmarks = try #require(face["landmarks"] as? [[Double]])
        #expect(landmarks.count == 478 && landmarks.allSatisfy { $0.count == 3 })
        let box = try #require(face["box"] as? [Double])
        // Every mesh point lies around the face's box; the irises inside it.
        #expect(landmarks.allSatisfy { abs($0[0] - (box[0] + box[2] / 2)) < box[2] && abs($0[1] - (box[1] + box[3] / 2)) < box[3] })
        #expect(landmarks[468][0] < landmarks[473][0], "the subject's right iris is on the image's left")
        let expressions = try #require(face["expressions"] as? [String: Double])
        #expect(Set(expressions.keys) == ["eyeBlinkLeft", "eyeBlinkRight", "jawOpen", "mouthSmileLeft", "mouthSmileRight", "browInnerUp"])
        #expect(expressions.values.allSatisfy { (0...1).contains($0) })
        #expect(expressions["eyeBlinkLeft"]! < 0.3 && expressions["eyeBlinkRight"]! < 0.3, "her eyes are open")
        let pose = try #require(face["pose"] as? [String: Double])
        #expect(abs(pose["yaw"]!) < 10 && abs(pose["roll"]!) < 10 && abs(pose["pitch"]!) < 15, "\(pose)")
        let gaze = try #require(face["gaze"] as? [String: [Double]])
        #expect(gaze["left"]?.count == 2 && gaze["right"]?.count == 2)
        #expect(face["states"] is [String])
        // The keys in SPEC §8's order, for a person reading the line.
        func keys(_ text: Substring, _ names: [String]) -> [String.Index] { names.compactMap { text.range(of: "\"\($0)\":")?.lowerBound } }
        let line = try #require(run.standardOutput.split(separator: "\n").last)
        let top = keys(line, ["file", "width", "height", "faces"])
        let inner = keys(line, ["box", "score", "landmarks", "expressions", "states", "pose", "gaze", "measures"])
        #expect(top.count == 4 && top == top.sorted() && inner.count == 8 && inner == inner.sorted(), "\(line.prefix(300))")
        #expect(keys(line, ["yaw", "pitch", "roll"]).sorted() == keys(line, ["yaw", "pitch", "roll"]))
    }

    @Test("--draw writes a PNG with the mesh in green and the irises in yellow where the JSON says they are")
    func draw() throws {
        let folder = try ScratchDirectory("faces")
        // A folder that is not there yet is made.
        let run = try SentryProcess(["faces", "--json", "--draw", folder.path + "/new/out", Self.astronaut])
        #expect(run.status == 0, "\(run.standardError)")
        let face = try #require((try Self.objects(run.standardOutput).first?["faces"] as? [[String: Any]])?.first)
        let landmarks = try #require(face["landmarks"] as? [[Double]])
        let drawn = folder.file("new/out/astronaut.png").path
        let rgb = try SentryProcess(
            program: "/usr/bin/ffmpeg", ["-v", "error", "-i", drawn, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let pixels = [UInt8](rgb.outputBytes)
        try #require(pixels.count == 512 * 512 * 3, "\(rgb.standardError)")
        func colour(_ x: Double, _ y: Double) -> (Int, Int, Int) {
            let index = (Int(y.rounded()) * 512 + Int(x.rounded())) * 3
            return (Int(pixels[index]), Int(pixels[index + 1]), Int(pixels[index + 2]))
        }
        // The cheek and chin points (drawn last over nothing else) are green; the photo is gray.
        for index in [152, 234, 454] {
            let (r, g, b) = colour(landmarks[index][0], landmarks[index][1])
            #expect(g > 150 && r < 80 && b < 80, "point \(index) is (\(r), \(g), \(b))")
        }
        // Yellow on the iris' rim: somewhere between the centre and a rim point.
        let center = landmarks[468], rim = landmarks[469]
        let yellow = (0...10).contains { step in
            let t = 0.8 + Double(step) * 0.04
            let (r, g, b) = colour(center[0] + (rim[0] - center[0]) * t, center[1] + (rim[1] - center[1]) * t)
            return r > 200 && g > 180 && b < 80
        }
        #expect(yellow)
        let (r, g, b) = colour(5, 500)
        #expect(r == g && g == b, "away from the face the photo stays gray")
    }

    @Test(
        "a missing, empty, text, folder or 20000x20000-header image: one line naming it, exit 1, and the good images are still read",
        arguments: ["missing", "empty", "text", "folder", "huge"])
    func badImage(kind: String) throws {
        let folder = try ScratchDirectory("faces-bad")
        let path: String
        switch kind {
        case "missing": path = folder.file("nothing.png").path
        case "empty": path = folder.file("empty.png").path; try Data().write(to: URL(fileURLWithPath: path))
        case "text": path = folder.file("notes.jpg").path; try Data("hello\n".utf8).write(to: URL(fileURLWithPath: path))
        case "folder": path = folder.path
        default:
            // A PNG whose header claims 20000x20000 pixels and holds none.
            func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
                let body = Array(type.utf8) + data
                var crc: UInt32 = 0xFFFF_FFFF
                for byte in body {
                    crc ^= UInt32(byte)
                    for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
                }
                return withUnsafeBytes(of: UInt32(data.count).bigEndian, Array.init) + body + withUnsafeBytes(of: (~crc).bigEndian, Array.init)
            }
            let side = withUnsafeBytes(of: UInt32(20000).bigEndian, Array.init)
            let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", side + side + [8, 0, 0, 0, 0]) + chunk("IEND", [])
            path = folder.file("huge.png").path
            try Data(png).write(to: URL(fileURLWithPath: path))
        }
        let run = try SentryProcess(["faces", "--json", path, Self.astronaut])
        #expect(run.status == 1)
        let errors = run.standardError.split(separator: "\n")
        #expect(errors.count == 1 && errors[0].hasPrefix("sentry: image \(path): "), "\(run.standardError)")
        #expect(try Self.objects(run.standardOutput).count == 1, "the astronaut is still read")
    }

    @Test("faces takes run's detector flags: OpenCV's messi5 has no face to BlazeFace at any score, and one to the Haar cascade")
    func detectorFlags() throws {
        let messi = Self.photos.appendingPathComponent("messi5.png").path
        for arguments in [[], ["--min-score", "0.3"]] {
            let run = try SentryProcess(["faces", "--json", messi] + arguments)
            let faces = try Self.objects(run.standardOutput).first?["faces"] as? [Any]
            #expect(run.status == 0 && faces?.count == 0, "\(arguments): \(run.standardError)")
        }
        let haar = try SentryProcess(["faces", "--json", messi, "--detector", "haar"])
        let faces = try #require(try Self.objects(haar.standardOutput).first?["faces"] as? [[String: Any]], "\(haar.standardError)")
        #expect(faces.count == 1 && (faces.first?["landmarks"] as? [Any])?.count == 478)
        let refused = try SentryProcess(["faces", messi, "--min-score", "2"])
        #expect(refused.status != 0 && refused.standardError.contains("--min-score"))
    }

    @Test("capture --save keeps a still of the scene, JPEG or PNG by its name, which faces then reads; another name is refused")
    func capturedStill() throws {
        let folder = try ScratchDirectory("capture-save")
        for name in ["scene.jpg", "scene.png"] {
            let path = folder.file(name).path
            let capture = try SentryProcess(["capture", "--camera", DemoClip.path, "--frames", "3", "--save", path])
            #expect(capture.status == 0 && capture.standardOutput.contains("saved frame 3 to \(path)"), "\(capture.standardError)")
            let read = try SentryProcess(["faces", "--json", path])
            let report = try #require(try Self.objects(read.standardOutput).first, "\(read.standardError)")
            #expect(report["width"] as? Double == 640 && report["height"] as? Double == 480 && (report["faces"] as? [Any])?.count == 1, "\(name)")
        }
        let gif = try SentryProcess(["capture", "--camera", DemoClip.path, "--frames", "3", "--save", folder.file("scene.gif").path])
        #expect(gif.status != 0 && gif.standardError.contains("name a .jpg or .png file"))
        let nowhere = try SentryProcess(["capture", "--camera", DemoClip.path, "--frames", "3", "--save", "/nonexistent/scene.jpg"])
        #expect(nowhere.status == 1 && nowhere.standardError.contains("--save /nonexistent/scene.jpg: cannot be written"))
    }
}
