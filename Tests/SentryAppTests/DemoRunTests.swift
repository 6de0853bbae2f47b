import FaceDetection
import Geometry
import Logging
import ModelFiles
import SentryApp
import Serial
import ServoSim
import TestClips
import Testing
import Tracking
import TurretLinks
import TurretProtocol
import Video

@Suite("End to end on the demo clip against the simulated servo", .serialized)
struct EndToEndTests {
    @Test("the servo follows the face's known path within ±3°, and L comes exactly when the face leaves")
    func followsFace() throws {
        var options = RunOptions(camera: DemoClip.path, serial: simulatedSerialName)
        options.showStatus = false
        options.keepResults = true
        let summary = try Runner.run(options, logger: Logger(label: "test"))
        #expect(summary.frames == 100)

        let mapper = AngleMapper()
        var lastCommand: Command?
        var sawLost = false, sawReturn = false
        for result in summary.results {
            let t = result.timestamp
            if let command = result.commands.last { lastCommand = command }
            if DemoClip.faceFullyInside(at: t) {
                let expected = mapper.angle(position: DemoClip.faceCenter(at: t).x, extent: DemoClip.frameWidth, frameWidth: DemoClip.frameWidth)
                let pan = try #require(result.aim?.pan, "no face found at \(t)s though it is in the frame")
                #expect(abs(pan - expected) <= 3, "at \(t)s aimed at \(pan)°, the face is at \(expected)°")
                if case .pan(let written)? = lastCommand {
                    #expect(abs(written - expected) <= 3, "at \(t)s the servo was last told \(written)°, the face is at \(expected)°")
                } else {
                    Issue.record("at \(t)s the face is in view but the last command was \(String(describing: lastCommand))")
                }
                if sawLost { sawReturn = true }
            } else if DemoClip.faceFullyOutside(at: t) {
                #expect(lastCommand == .lost, "at \(t)s the face is gone but the last command was \(String(describing: lastCommand))")
                sawLost = true
            }
            // L only ever goes out when the face is not wholly in view.
            if result.commands.contains(.lost) {
                #expect(!DemoClip.faceFullyInside(at: t), "L at \(t)s while the face is in view")
            }
        }
        #expect(sawLost && sawReturn, "the clip should lose the face and find it again")

        // The wire carries exactly the commands, nothing else: the clip ends on
        // the face, and the parting --on-exit hold leaves an aimed turret as it is.
        let written = summary.results.flatMap(\.commands)
        #expect(summary.receivedBytes == written.flatMap(\.bytes))
        #expect(!written.contains { if case .tilt = $0 { true } else { false } }, "tilt is off: no Y may be sent")

        // The simulated servo went where it was told: every pan aim shows in its track.
        let pans = Set(summary.servoTrack.map(\.pan))
        for case .pan(let angle) in written { #expect(pans.contains(angle)) }
        #expect(summary.servoTrack.last?.isScanning == false)
    }

    @Test("with tilt enabled, Y follows the face's height within ±3°")
    func tiltFollows() throws {
        let servo = try SimulatedServo()
        defer { servo.stop() }
        let source = try FileFrameSource(path: DemoClip.path)
        defer { source.close() }
        let detector = CascadeDetector(cascade: try HaarCascade(contentsOfFile: CascadeFile.haarFrontalFace))
        let output = try SerialCommandOutput(path: servo.devicePath)
        defer { output.close() }
        let pipeline = Pipeline(detector: detector, output: output, settings: PipelineSettings(tracking: TrackingSettings(tiltEnabled: true)))
        let mapper = AngleMapper()
        for _ in 0..<12 {
            let frame = try #require(try source.nextFrame())
            let result = try pipeline.process(frame)
            let expected = mapper.angle(position: DemoClip.faceCenter(at: frame.timestamp).y, extent: DemoClip.frameHeight, frameWidth: DemoClip.frameWidth)
            let tilt = try #require(result.aim?.tilt)
            #expect(abs(tilt - expected) <= 3, "at \(frame.timestamp)s tilt \(tilt)°, expected \(expected)°")
        }
        try output.flush(timeout: 1)
        servo.waitForBytes(output.bytesWritten, timeout: 1)
        let commands = Command.decode(servo.receivedBytes)
        #expect(commands.contains { if case .tilt = $0 { true } else { false } })
        if case .tilt(let last)? = commands.last(where: { $0.axis == .tilt }) {
            #expect(servo.current.tilt == last)
        }
    }
}
