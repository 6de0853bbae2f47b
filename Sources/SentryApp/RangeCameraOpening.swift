import FaceDetection
import Geometry
import Imaging
import ServoSim
import ShootingRange
import Tracking
import TurretLinks
import Video

/// `--camera range:SCENARIO[+SECONDS]:PHOTO`: the shooting range's camera.
public let rangeCameraPrefix = "range:"

/// What `--camera range:SCENARIO[+SECONDS]:PHOTO` names: a scenario, its
/// walks begun SECONDS in (`sentry range --turns`), and the face's photo.
public struct RangeCameraName: Sendable, Equatable {
    public var scenario: String
    public var startOffset: Double
    public var photo: String

    /// Nil unless `camera` starts with `range:`; throws when the rest is not a scenario and a photo.
    public init?(parsing camera: String) throws(VideoError) {
        guard camera.hasPrefix(rangeCameraPrefix) else { return nil }
        let rest = camera.dropFirst(rangeCameraPrefix.count)
        let names = RangeScenario.all.map(\.name).joined(separator: ", ")
        let usage = VideoError(
            source: camera, reason: "is not range:SCENARIO[+SECONDS]:PHOTO",
            hint: "name one of \(names) (and how many seconds into its walks to begin, e.g. +1.5) and a photo with a face, e.g. range:crossing-1:face.jpg")
        guard let colon = rest.firstIndex(of: ":"), rest.index(after: colon) < rest.endIndex else { throw usage }
        let parts = rest[..<colon].split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)
        guard RangeScenario.named(String(parts[0])) != nil else { throw usage }
        scenario = String(parts[0])
        if parts.count == 2 {
            guard let seconds = Double(parts[1]), seconds.isFinite, seconds >= 0 else { throw usage }
            startOffset = seconds
        } else {
            startOffset = 0
        }
        photo = String(rest[rest.index(after: colon)...])
    }

    /// The scenario, its walks begun `startOffset` in.
    public var rangeScenario: RangeScenario { RangeScenario.named(scenario)!.startingLater(by: startOffset) }
}

extension Runner {
    /// The range's camera, its people wearing the photo's largest face (found
    /// by `detector`): its frames on the simulated servo's frame clock (at the
    /// wall clock's pace if `paced`: `--realtime`), with its darts judged, or
    /// without one (a board, the firmware in simavr) in real time.
    static func openRangeCamera(
        _ name: RangeCameraName, detector: any FaceDetector, simulator: SimulatedServo?, output: any CommandOutput, paced: Bool, lead: LeadSettings
    ) throws(VideoError) -> (source: any FrameSource, darts: RangeDarts?) {
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
            scenario: name.rangeScenario, sprite: FaceSprite(image: photo.image, chroma: photo.chroma, box: face), realtime: simulator == nil,
            paced: paced)
        guard let simulator else { return (camera, nil) }
        let darts = RangeDarts(camera: camera, judge: RangeJudge(world: camera.world, triggerDelay: lead.triggerDelay, muzzleSpeed: lead.muzzleSpeed))
        return (FrameClockedSource(camera, simulator: simulator, output: output, darts: darts), darts)
    }
}

/// The simulated turret's shots on the range, each judged once the dart has
/// left (`RangeJudge`, the delays of `--trigger-delay` and `--muzzle-speed`):
/// where the last ones landed, for the console to draw over the picture.
/// Fed and read on the frame loop's thread (the source's `nextFrame`, then its observers).
final class RangeDarts {
    let camera: RangeCamera
    let judge: RangeJudge
    private var landings: DartMarks
    private var shotsSeen = 0
    /// Shots taken whose darts have not left yet: when `F` arrived.
    private var waiting: [Double] = []

    init(camera: RangeCamera, judge: RangeJudge) {
        self.camera = camera
        self.judge = judge
        landings = DartMarks(world: camera.world)
    }

    /// The marks the picture of the frame at `time` shows (it is the camera's latency old).
    func marks(atFrame time: Double) -> [(x: Double, y: Double, hit: Bool)] { landings.marks(at: time - camera.latency) }

    /// The turret as the simulator has it at a frame's `time`.
    func update(_ turret: SimulatedServo.Sample, simulator: SimulatedServo, at time: Double) {
        // A dart is judged once the horns it leaves along are in the track.
        func hasLeft(_ shot: Double) -> Bool { shot + judge.triggerDelay <= time }
        let fired = turret.shots > shotsSeen
        guard fired || waiting.contains(where: hasLeft) else { return }
        let track = simulator.track
        if fired {
            waiting += SimulatedServo.shotTimes(in: track, after: shotsSeen)
            shotsSeen = turret.shots
        }
        for shot in waiting where hasLeft(shot) {
            let outcome = judge.judge(RangeJudge.Shot(time: shot), people: camera.scenario.people) { SimulatedServo.horns(at: $0, in: track) }
            let horns = SimulatedServo.horns(at: shot + judge.triggerDelay, in: track)
            landings.landed(outcome, pan: horns.pan, tilt: horns.tilt)
        }
        waiting.removeAll(where: hasLeft)
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
    private let darts: RangeDarts?

    init(_ source: any FrameSource, simulator: SimulatedServo, output: any CommandOutput, darts: RangeDarts? = nil) {
        self.source = source
        self.simulator = simulator
        self.output = output
        self.darts = darts
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
        let turret = simulator.advance(to: frame.timestamp)
        darts?.update(turret, simulator: simulator, at: frame.timestamp)
        return frame
    }

    func close() { source.close() }
}
