import Events
import Foundation
import Geometry
import Scratch
import Imaging
import LogRecording
import Testing
import Tracking
import TurretProtocol
import Video

@testable import SentryApp

/// A file that plays `frames` frames and then cannot be decoded (or, not `breaks`, ends);
/// `comesBack`: a camera unplugged instead.
private final class BreakingSource: FrameSource {
    private var left: Int
    private var index = 0
    let comesBack: Bool
    let breaks: Bool
    init(frames: Int, breaks: Bool = true, comesBack: Bool = false) {
        left = frames
        self.breaks = breaks
        self.comesBack = comesBack
    }
    var width: Int { 64 }
    var height: Int { 48 }
    var framesPerSecond: Double { 30 }
    var name: String { "broken.mkv" }
    func nextFrame() throws(VideoError) -> Frame? {
        guard left > 0 else {
            guard breaks else { return nil }
            throw VideoError(source: "broken.mkv", reason: "ffmpeg cannot decode it (invalid data)", hint: "")
        }
        left -= 1
        defer { index += 1 }
        return Frame(image: GrayImage(width: 64, height: 48, pixels: [UInt8](repeating: 128, count: 64 * 48)), timestamp: Double(index) / 30, index: index)
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

    @Test("a lock lost because the camera went away is a lost event like any other: kept in the events folder with the last frame's pictures")
    func cameraLossIsAnEvent() throws {
        let scratch = try ScratchDirectory("camera-loss")
        let log = LogRecorder()
        let store = try EventStore(directory: scratch.file("events").path, keep: 100, maximumBytes: 1 << 24)
        let writer = EventWriter(store: store, logger: log.logger)
        var settings = PipelineSettings()
        settings.lockAfter = 0.2
        let pipeline = Pipeline(detector: FixedFaces([Box(x: 20, y: 10, width: 16, height: 16)]), output: RecordingOutput(), settings: settings)
        let camera = RecoveringCamera(BreakingSource(frames: 30, comesBack: true), path: "/dev/video0", keepsColour: false, logger: log.logger) { () throws(VideoError) in
            BreakingSource(frames: 0, breaks: false)
        }
        let loop = FrameLoop(pipeline: pipeline, camera: camera, observers: [EventLog(writer: writer)], changes: RunChanges(), logger: log.logger)
        _ = try loop.run(maxFrames: nil, onExit: .hold)
        writer.finish()
        let records = try FileManager.default.subpathsOfDirectory(atPath: scratch.file("events").path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(records.map { $0.contains("-lock-") ? "lock" : $0.contains("-lost-") ? "lost" : "other" }.filter { $0 != "other" } == ["lock", "lost"], "\(records)")
        let lost = records.first { $0.contains("-lost-29") }
        #expect(lost != nil, "the loss is told against the last frame, 29: \(records)")
        if let lost {
            let picture = scratch.file("events").path + "/" + lost.dropLast(5) + ".jpg"
            #expect(FileManager.default.fileExists(atPath: picture), "\(picture)")
        }
    }

    @Test("the run's services stop in the reverse of the order they started, once, however many times they are told")
    func servicesStopInReverse() {
        let services = RunServices()
        var stopped: [String] = []
        for name in ["link", "MQTT", "event writer"] { services.started { stopped.append(name) } }
        services.stopAll()
        services.stopAll()
        #expect(stopped == ["event writer", "MQTT", "link"])
    }
}
