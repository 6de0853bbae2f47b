import FaceDetection
import Imaging
import Testing
import Video
import VirtualCamera

@Suite("The virtual camera's geometry (SPEC §8)")
struct VirtualCameraTests {
    /// A 1800x600 scene, black, with a white 3x3 square centred on (x, y).
    func scene(dotAt x: Int, _ y: Int) -> GrayImage {
        var image = GrayImage(width: 1800, height: 600)
        for dy in -1...1 { for dx in -1...1 { image[x + dx, y + dy] = 255 } }
        return image
    }

    /// The brightest pixel of `image`.
    func brightest(_ image: GrayImage) -> (x: Int, y: Int) {
        let index = image.pixels.indices.max { image.pixels[$0] < image.pixels[$1] }!
        return (index % image.width, index / image.width)
    }

    @Test(
        "pan a centres the view at x = W·a/180, tilt b at y = H/2 + W·(b−90)/180; the view is W·fov/180 wide",
        arguments: [(90.0, 90.0), (45.0, 90.0), (120.0, 95.0), (60.0, 86.0)])
    func centre(pan: Double, tilt: Double) {
        let x = Int((1800 * pan / 180).rounded()), y = Int((300 + 1800 * (tilt - 90) / 180).rounded())
        let camera = VirtualCamera(scene: scene(dotAt: x, y), size: FrameSize(width: 600, height: 400), fieldOfView: 60) { _ in (pan, tilt) }
        let frame = try! camera.nextFrame()!
        let dot = brightest(frame.image)
        // The view is 600 scene pixels wide: 1:1, so the dot sits at the frame centre.
        #expect(abs(dot.x - 300) <= 1 && abs(dot.y - 200) <= 1, "dot at \(dot)")
    }

    @Test("a point 10° right of the aim is 10/fov of the width right of centre, scaled to the output")
    func scale() {
        // fov 60 over 1800 px: the view is 600 scene px, drawn 320 px wide.
        let camera = VirtualCamera(scene: scene(dotAt: 1000, 300), size: FrameSize(width: 320, height: 240), fieldOfView: 60) { _ in (90, 90) }
        let dot = brightest(try! camera.nextFrame()!.image)
        // 1000 is 100 scene px = 10° right of 900; 10/60 of 320 px = 53.3 px.
        #expect(abs(dot.x - (160 + 53)) <= 1 && abs(dot.y - 120) <= 1, "dot at \(dot)")
    }

    @Test("frames run on their own clock, and the pose is asked for at each frame's time")
    func frameClock() throws {
        nonisolated(unsafe) var asked: [Double] = []
        let camera = VirtualCamera(
            scene: GrayImage(width: 360, height: 120), size: FrameSize(width: 64, height: 48),
            fieldOfView: 60, framesPerSecond: 25
        ) { time in
            asked.append(time)
            return (90, 90)
        }
        for _ in 0..<3 { _ = try camera.nextFrame() }
        #expect(asked == [0, 0.04, 0.08])
    }
}
