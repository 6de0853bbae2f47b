import FaceDetection
import Geometry
import Imaging
import SentryApp
import Serial
import Testing
import Tracking
import TurretLinks
import TurretProtocol
import Video

@Suite("steering by hand and settings while running (the console's requests, in the pipeline)")
struct SteeringTests {
    let face = Box(x: 288, y: 200, width: 64, height: 64)  // centre (320, 232): X90.
    func frame(_ index: Int) -> Frame { Frame(image: GrayImage(width: 640, height: 480), timestamp: Double(index) / 10, index: index) }

    @Test("a point, a nudge, centre and scan override tracking and go through the same de-duplication; auto hands back")
    func steering() throws {
        let output = RecordingOutput()
        let pipeline = Pipeline(detector: FixedFaces([face]), output: output, settings: PipelineSettings())
        _ = try pipeline.process(frame(0))
        #expect(output.sent == [.pan(90)])
        pipeline.apply(.steer(.point(x: 64, y: 100)), frameWidth: 640, frameHeight: 480)
        _ = try pipeline.process(frame(1))
        _ = try pipeline.process(frame(2))
        #expect(output.sent == [.pan(90), .pan(50)])
        #expect(pipeline.steering == .manual(Aim(pan: 50, tilt: 60)))
        pipeline.apply(.steer(.nudge(pan: 2, tilt: 0)), frameWidth: 640, frameHeight: 480)
        _ = try pipeline.process(frame(3))
        pipeline.apply(.steer(.nudge(pan: -200, tilt: 0)), frameWidth: 640, frameHeight: 480)
        _ = try pipeline.process(frame(4))
        pipeline.apply(.steer(.scan), frameWidth: 640, frameHeight: 480)
        _ = try pipeline.process(frame(5))
        _ = try pipeline.process(frame(6))
        pipeline.apply(.steer(.center), frameWidth: 640, frameHeight: 480)
        _ = try pipeline.process(frame(7))
        pipeline.apply(.steer(.auto), frameWidth: 640, frameHeight: 480)
        let back = try pipeline.process(frame(8))
        #expect(output.sent == [.pan(90), .pan(50), .pan(52), .pan(40), .lost, .pan(90)])
        #expect(back.commands.isEmpty && pipeline.steering == .tracking)  // tracking wants 90, already held
    }

    @Test("new settings take effect from the next frame; the target and the lock are kept")
    func change() throws {
        let output = RecordingOutput()
        var settings = PipelineSettings()
        settings.lockAfter = 0.2
        let pipeline = Pipeline(detector: FixedFaces([face]), output: output, settings: settings)
        for index in 0..<4 { _ = try pipeline.process(frame(index)) }
        #expect(try pipeline.process(frame(4)).isLocked)
        var changed = settings
        changed.tracking.mapper = AngleMapper(offset: 20, invertX: true)
        changed.deadband = 3
        pipeline.apply(.settings(changed), frameWidth: 640, frameHeight: 480)
        let next = try pipeline.process(frame(5))
        #expect(next.commands == [.pan(90)] || next.commands.isEmpty)  // the centre maps to 90 under any offset
        #expect(next.isLocked && next.lockEvent == nil)
        let moved = FixedFaces([Box(x: 0, y: 200, width: 64, height: 64)])  // centre x 32: 20 + 32/640*140 = 27, mirrored 153
        pipeline.apply(.detector(DetectorHandOff(detector: moved, name: "moved")), frameWidth: 640, frameHeight: 480)
        #expect(try pipeline.process(frame(6)).commands == [.pan(153)])
    }

    @Test("a new trim moves the servo at once by its difference; the frames' commands stay untrimmed")
    func trim() throws {
        let output = RecordingOutput()
        var settings = PipelineSettings()
        settings.trim = ServoTrim(pan: 3)
        let pipeline = Pipeline(detector: FixedFaces([face]), output: output, settings: settings)
        let first = try pipeline.process(frame(0))
        #expect(first.commands == [.pan(90)] && output.sent == [.pan(93)])
        settings.trim = ServoTrim(pan: -2)
        pipeline.apply(.settings(settings), frameWidth: 640, frameHeight: 480)
        let next = try pipeline.process(frame(1))
        #expect(next.commands.isEmpty && output.sent == [.pan(93), .pan(88)])
        #expect(pipeline.commanded == Aim(pan: 90, tilt: 90))
    }
}
