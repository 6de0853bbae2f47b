import FoundationEssentials
import Glibc
import Imaging
import MonotonicTime
import Video

/// A camera riding on a simulated turret (`--camera sim:IMAGE`, SPEC §8):
/// each frame is the view of a wide scene through a window that follows the
/// servo angles, so the closed loop of `--mount turret` can be run and
/// measured without hardware.
///
/// Geometry: the scene (W x H pixels) spans pan 0–180° across its width;
/// pan `a` centres the window at `x = W·a/180`, tilt `b` at
/// `y = H/2 + W·(b−90)/180`; the window is `W·fov/180` wide with the
/// output's aspect and is scaled to the output size (bilinear). Outside the
/// scene is mid-gray.
///
/// `sensorNoise` adds a real sensor's grain: every pixel of every frame
/// gets its own near-Gaussian deviation of that many gray levels, the same
/// for the same frame index in every run, so tests see a still scene as a
/// camera shows it and stay repeatable.
///
/// Frames are on their own clock (`index / framesPerSecond`), which is the
/// time `pose` is asked for; with `realtime` they are also paced to it.
public final class VirtualCamera: FrameSource {
    /// The servo angles (degrees) the camera looks along at a time.
    public typealias Pose = (Double) -> (pan: Double, tilt: Double)

    public let scene: GrayImage
    public let width: Int
    public let height: Int
    public let fieldOfView: Double
    public let framesPerSecond: Double
    public let name: String
    public let sensorNoise: Double
    private let realtime: Bool
    private let pose: Pose
    private let started = monotonicSeconds()
    private var index = 0

    /// Opens `scenePath` (any image ffmpeg reads) as the scene.
    public convenience init(
        scenePath: String, size: FrameSize, fieldOfView: Double, framesPerSecond: Double = 30,
        realtime: Bool = false, sensorNoise: Double = 0, pose: @escaping Pose
    ) throws(VideoError) {
        let source = try FileFrameSource.open(path: scenePath)
        defer { source.close() }
        guard let first = try source.nextFrame() else {
            throw VideoError(source: scenePath, reason: "holds no picture", hint: "pass an image for --camera sim:IMAGE")
        }
        self.init(
            scene: first.image, name: "sim:" + URL(fileURLWithPath: scenePath).lastPathComponent, size: size,
            fieldOfView: fieldOfView, framesPerSecond: framesPerSecond, realtime: realtime, sensorNoise: sensorNoise, pose: pose)
    }

    /// A camera over an image already in memory.
    public init(
        scene: GrayImage, name: String = "sim", size: FrameSize, fieldOfView: Double, framesPerSecond: Double = 30,
        realtime: Bool = false, sensorNoise: Double = 0, pose: @escaping Pose
    ) {
        precondition(fieldOfView > 0 && framesPerSecond > 0 && sensorNoise >= 0)
        self.sensorNoise = sensorNoise
        self.scene = scene
        self.name = name
        width = size.width
        height = size.height
        self.fieldOfView = fieldOfView
        self.framesPerSecond = framesPerSecond
        self.realtime = realtime
        self.pose = pose
    }

    public func nextFrame() throws(VideoError) -> Frame? {
        let time = Double(index) / framesPerSecond
        if realtime {
            let wait = started + time - monotonicSeconds()
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
        }
        let (pan, tilt) = pose(time)
        defer { index += 1 }
        var image = render(pan: pan, tilt: tilt)
        if sensorNoise > 0 { addNoise(to: &image, seed: UInt64(index)) }
        return Frame(image: image, timestamp: time, index: index)
    }

    /// Adds `sensorNoise` to every pixel: the sum of four uniform deviates
    /// (Irwin–Hall, close enough to a sensor's Gaussian), from a SplitMix64
    /// stream seeded with the frame's index.
    private func addNoise(to image: inout GrayImage, seed: UInt64) {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        // Four 16-bit uniforms in [-0.5, 0.5) sum to variance 1/3: scale by √3.
        let scale = Float(sensorNoise * 3.0.squareRoot()) / 65536
        image.withUnsafeMutablePixels { pixels in
            for index in pixels.indices {
                let bits = next()
                var sum: Float = -2 * 32768
                for lane in 0..<4 { sum += Float((bits >> (16 * UInt64(lane))) & 0xFFFF) }
                pixels[index] = UInt8(min(max(Float(pixels[index]) + sum * scale, 0), 255).rounded())
            }
        }
    }

    public func close() {}

    /// The view at `pan`, `tilt` degrees.
    public func render(pan: Double, tilt: Double) -> GrayImage {
        let window = viewWindow(pan: pan, tilt: tilt)
        let step = window.width / Double(width)
        var image = GrayImage(width: width, height: height)
        scene.pixels.withUnsafeBufferPointer { source in
            image.withUnsafeMutablePixels { out in
                for row in 0..<height {
                    let y = window.y + (Double(row) + 0.5) * step - 0.5
                    let y0 = Int(y.rounded(.down)), fy = Float(y - Double(y0))
                    for column in 0..<width {
                        let x = window.x + (Double(column) + 0.5) * step - 0.5
                        let x0 = Int(x.rounded(.down)), fx = Float(x - Double(x0))
                        let top = sample(source, x0, y0) * (1 - fx) + sample(source, x0 + 1, y0) * fx
                        let bottom = sample(source, x0, y0 + 1) * (1 - fx) + sample(source, x0 + 1, y0 + 1) * fx
                        out[row * width + column] = UInt8(top * (1 - fy) + bottom * fy + 0.5)
                    }
                }
            }
        }
        return image
    }

    /// The scene rectangle (top-left corner and size, scene pixels) seen at
    /// `pan`, `tilt`.
    public func viewWindow(pan: Double, tilt: Double) -> (x: Double, y: Double, width: Double, height: Double) {
        let sceneWidth = Double(scene.width)
        let viewWidth = sceneWidth * fieldOfView / 180
        let viewHeight = viewWidth * Double(height) / Double(width)
        let centerX = sceneWidth * pan / 180
        let centerY = Double(scene.height) / 2 + sceneWidth * (tilt - 90) / 180
        return (centerX - viewWidth / 2, centerY - viewHeight / 2, viewWidth, viewHeight)
    }

    @inline(__always)
    private func sample(_ pixels: UnsafeBufferPointer<UInt8>, _ x: Int, _ y: Int) -> Float {
        guard x >= 0, y >= 0, x < scene.width, y < scene.height else { return 128 }
        return Float(pixels[y * scene.width + x])
    }
}
