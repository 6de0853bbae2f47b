import FaceDetection
import Foundation
import Geometry
import Imaging
import SentryApp
import TestClips
import Testing
import Tracking
import Video

/// Scenes at 30 fps made from the demo photo's head and shoulders, pasted
/// where each test wants them (the demo clip itself is 10 fps, too slow for
/// the frames between passes to matter).
enum Scenes {
    static let framesPerSecond = 30.0
    /// The photo's part the demo clip uses: x 80-330, y 0-300, face centre (144.5, 113.5).
    static let head: GrayImage = {
        let source = try! FileFrameSource(path: DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png").path)
        defer { source.close() }
        let photo = try! source.nextFrame()!.image
        var head = GrayImage(width: 250, height: 300)
        for y in 0..<300 { for x in 0..<250 { head[x, y] = photo[80 + x, y] } }
        return head
    }()
    static let faceCenterInHead = (x: 144.5, y: 113.5)

    /// A 640x480 mid-gray frame with the head pasted with its face centre at each point.
    static func frame(faces: [(x: Double, y: Double)]) -> GrayImage {
        var image = GrayImage(width: 640, height: 480, value: 128)
        for face in faces {
            let left = Int(face.x - faceCenterInHead.x), top = Int(face.y - faceCenterInHead.y)
            for y in 0..<head.height where (0..<480).contains(top + y) {
                for x in 0..<head.width where (0..<640).contains(left + x) { image[left + x, top + y] = head[x, y] }
            }
        }
        return image
    }

    /// `seconds` of frames with the faces at `faces(t)`.
    static func video(seconds: Double, faces: (Double) -> [(x: Double, y: Double)]) -> [Frame] {
        (0..<Int(seconds * framesPerSecond)).map { index in
            let t = Double(index) / framesPerSecond
            return Frame(image: frame(faces: faces(t)), timestamp: t, index: index)
        }
    }

    /// The demo clip's path (tools/make-demo-clip), at 30 fps.
    static func demoFace(at t: Double) -> [(x: Double, y: Double)] {
        let center = DemoClip.faceCenter(at: t)
        return [center]
    }
}
