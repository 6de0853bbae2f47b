import Geometry
import Imaging
import LogRecording
import Testing
import Tracking
import TurretProtocol
import Video

@testable import SentryApp

/// A file that plays `frames` frames and then cannot be decoded.
private final class BreakingSource: FrameSource {
    private var left: Int
    private var index = 0
    init(frames: Int) { left = frames }
    var width: Int { 64 }
    var height: Int { 48 }
    var framesPerSecond: Double { 30 }
    var name: String { "broken.mkv" }
    func nextFrame() throws(VideoError) -> Frame? {
        guard left > 0 else { throw VideoError(source: "broken.mkv", reason: "ffmpeg cannot decode it (invalid data)", hint: "") }
        left -= 1
        defer { index += 1 }
        return Frame(image: GrayImage(width: 64, height: 48), timestamp: Double(index) / 30, index: index)
    }
    func close() {}
}

/// Counts the frames it is shown and whether it was ended.
private final class EndingObserver: FrameObserver {
    var frames = 0
    var finished = 0
    func didProcess(_ outcome: FrameOutcome) { frames += 1 }
    func loopFinished() { finished += 1 }
}

@Suite("A run ends the same way however it ends")
struct LifecycleTests {
    @Test("a camera that fails mid-run: the error still ends the run, after the parting command went out and every observer was ended")
    func thrownErrorTearsDown() throws {
        let output = RecordingOutput()
        let log = LogRecorder()
        let pipeline = Pipeline(detector: FixedFaces([Box(x: 20, y: 10, width: 16, height: 16)]), output: output, settings: PipelineSettings())
        let camera = RecoveringCamera(BreakingSource(frames: 3), path: "broken.mkv", keepsColour: false, logger: log.logger) { () throws(VideoError) in
            BreakingSource(frames: 0)
        }
        let observers = [EndingObserver(), EndingObserver()]
        let loop = FrameLoop(pipeline: pipeline, camera: camera, observers: observers, changes: RunChanges(), logger: log.logger)
        #expect(throws: VideoError.self) { try loop.run(maxFrames: nil, onExit: .center) }
        #expect(output.sent.last == .pan(90), "\(output.sent)")
        #expect(observers.allSatisfy { $0.frames == 3 && $0.finished == 1 })
    }
}
