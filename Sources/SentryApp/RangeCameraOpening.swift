import FaceDetection
import Geometry
import Imaging
import ServoSim
import ShootingRange
import TurretLinks
import Video

/// `--camera range:SCENARIO:PHOTO`: the shooting range's camera.
public let rangeCameraPrefix = "range:"

/// What `--camera range:SCENARIO:PHOTO` names.
public struct RangeCameraName: Sendable, Equatable {
    public var scenario: String
    public var photo: String

    /// Nil unless `camera` starts with `range:`; throws when the rest is not a scenario and a photo.
    public init?(parsing camera: String) throws(VideoError) {
        guard camera.hasPrefix(rangeCameraPrefix) else { return nil }
        let rest = camera.dropFirst(rangeCameraPrefix.count)
        let names = RangeScenario.all.map(\.name).joined(separator: ", ")
        guard let colon = rest.firstIndex(of: ":"), RangeScenario.named(String(rest[..<colon])) != nil, rest.index(after: colon) < rest.endIndex else {
            throw VideoError(source: camera, reason: "is not range:SCENARIO:PHOTO", hint: "name one of \(names) and a photo with a face, e.g. range:crossing-1:face.jpg")
        }
        scenario = String(rest[..<colon])
        photo = String(rest[rest.index(after: colon)...])
    }
}

extension Runner {
    /// The range's camera, its people wearing the photo's largest face (found
    /// by `detector`): its frames on the simulated servo's frame clock, or
    /// without one (a board, the firmware in simavr) in real time.
    static func openRangeCamera(
        _ name: RangeCameraName, detector: any FaceDetector, simulator: SimulatedServo?, output: any CommandOutput
    ) throws(VideoError) -> any FrameSource {
        let source = try FileFrameSource.open(path: name.photo, colour: true)
        defer { source.close() }
        guard let photo = try source.nextFrame() else {
            throw VideoError(source: name.photo, reason: "holds no picture", hint: "give a photo of a face after range:SCENARIO:")
        }
        var faces: [Box] = []
        detector.detectFaces(in: photo.image, colour: photo.chroma, at: 0, into: &faces)
        guard let face = faces.max(by: { $0.width * $0.height < $1.width * $1.height }) else {
            throw VideoError(source: name.photo, reason: "shows no face the detector finds", hint: "give a photo with one face, seen from the front")
        }
        let camera = RangeCamera(
            scenario: RangeScenario.named(name.scenario)!, sprite: FaceSprite(image: photo.image, chroma: photo.chroma, box: face), realtime: simulator == nil)
        guard let simulator else { return camera }
        return FrameClockedSource(camera, simulator: simulator, output: output)
    }
}

/// Frames on the simulated servo's frame clock: before a frame is handed
/// over, the simulator takes in every byte written so far and moves its
/// clock to the frame's time, so the turret lags by its own speed, never by
/// the machine's.
final class FrameClockedSource: FrameSource {
    private let source: any FrameSource
    private let simulator: SimulatedServo
    private let output: any CommandOutput

    init(_ source: any FrameSource, simulator: SimulatedServo, output: any CommandOutput) {
        self.source = source
        self.simulator = simulator
        self.output = output
    }

    var width: Int { source.width }
    var height: Int { source.height }
    var framesPerSecond: Double { source.framesPerSecond }
    var name: String { source.name }
    var keepsColour: Bool {
        get { source.keepsColour }
        set { source.keepsColour = newValue }
    }
    var hasColour: Bool { source.hasColour }

    func nextFrame() throws(VideoError) -> Frame? {
        guard let frame = try source.nextFrame() else { return nil }
        simulator.waitForBytes(output.bytesWritten, timeout: 0.5)
        simulator.advance(to: frame.timestamp)
        return frame
    }

    func close() { source.close() }
}
