import FaceDetection
import Foundation
import Geometry
import Logging
import SentryApp
import Serial
import ServoSim
import Testing
import Tracking
import TurretProtocol
import Video
import VirtualCamera

/// Scenes made by `tools/make-scene` and where their face is, in servo angles.
/// How one closed-loop run went, from the simulated servo's physical angles.
struct Convergence: CustomStringConvertible {
    var firstSight: Int
    /// Frames from the first sight of the face until the servo stays within 1°.
    var framesToSettle: Int?
    var overshoot: Double
    var finalError: Double
    /// Commands after the servo settled (a limit cycle would keep sending).
    var commandsAfterSettling: Int

    init(_ summary: Runner.Summary, truth: Double, axis: KeyPath<SimulatedServo.Sample, Double>) throws {
        let results = summary.results
        let first = try #require(results.firstIndex { $0.target != nil }, "the face was never seen")
        firstSight = first
        let track = summary.servoTrack
        func position(at time: Double) -> Double {
            track.last { $0.time <= time + 1e-9 }.map { $0[keyPath: axis] } ?? 90
        }
        let sightTime = results[first].timestamp
        let direction: Double = truth >= position(at: sightTime) ? 1 : -1
        overshoot =
            track.filter { $0.time >= sightTime }
            .map { direction * ($0[keyPath: axis] - truth) }.max().map { max(0, $0) } ?? 0
        let lastOff = results.lastIndex { abs(position(at: $0.timestamp) - truth) > 1 }
        let settled = (lastOff ?? first - 1) + 1
        framesToSettle = settled < results.count ? max(0, settled - first) : nil
        finalError = abs(position(at: results.last!.timestamp) - truth)
        commandsAfterSettling = results[min(settled, results.count)...].filter { !$0.commands.isEmpty }.count
    }

    var description: String {
        "first sight at frame \(firstSight), settled \(framesToSettle.map(String.init) ?? "never") frames later, "
            + String(format: "overshoot %.2f°, final error %.2f°, %d commands after settling", overshoot, finalError, commandsAfterSettling)
    }
}

@Suite("The turret mount's closed loop in the virtual camera")
struct TurretTests {
    static func run(scene: String, frames: Int, simFOV: Double? = nil, tilt: Bool = false, invertX: Bool = false) throws -> Runner.Summary {
        var options = RunOptions(camera: virtualCameraPrefix + scene, serial: simulatedSerialName)
        options.showStatus = false
        options.keepResults = true
        options.maxFrames = frames
        options.onExit = .none
        options.virtualFieldOfView = simFOV
        // Haar: OpenCV-exact and steady frame to frame on this synthetic scene. Its face is
        // 76-141 px across in every view here (99 px at 60°): windows under 48 px find nothing
        // and cost half the scan (the runs' figures are the same as with the default 30 px;
        // from 60 px, windows near the smallest face were lost and one run settled later).
        options.detector.kind = .haar
        options.detector.cascadeParameters.minSize = 48
        options.detector.threads = 1
        // The command line's --detect-fps 8: full scans at 8 a second, the face's
        // neighbourhood between them, as a user's turret runs (every figure within its
        // bounds, as with a full scan every frame, at a third of the CPU).
        options.detector.detectRate = 8
        var tracking = TrackingSettings(mapper: AngleMapper(invertX: invertX), tiltEnabled: tilt)
        tracking.mount = .turret
        tracking.lostAfter = 0.3
        options.settings = PipelineSettings(tracking: tracking)
        return try Runner.run(options, logger: Logger(label: "test"))
    }

    @Test(
        "from several start angles the turret settles on the face: error ≤ 1°, overshoot ≤ 3°, within 20 frames, then silent",
        arguments: [70.0, 80.0, 100.0, 112.0, 130.0, 45.0])
    func settles(facePan: Double) throws {
        let left = Scene.left(forPan: facePan)
        // Faces outside the 60° view at the start (130°, 45°) are found by the sweep first.
        let summary = try Self.run(scene: Scene.path(left: left), frames: abs(facePan - 90) > 25 ? 150 : 75)
        let result = try Convergence(summary, truth: Scene.pan(left: left), axis: \.panPosition)
        print("turret pan to \(facePan)°: \(result)")
        try Self.expectSettled(result, within: 20)
        #expect(summary.results.count - result.firstSight - (result.framesToSettle ?? 0) >= 30, "the run must watch it stay settled")
    }

    @Test("a field of view wrong by ±30 % still converges without overshoot", arguments: [(42.0, 72.0), (42.0, 110.0), (78.0, 72.0), (78.0, 110.0)])
    func wrongFieldOfView(trueFOV: Double, facePan: Double) throws {
        let left = Scene.left(forPan: facePan)
        let summary = try Self.run(scene: Scene.path(left: left), frames: 90, simFOV: trueFOV)
        let result = try Convergence(summary, truth: Scene.pan(left: left), axis: \.panPosition)
        print("turret pan to \(facePan)° with a true FOV of \(trueFOV)° (60° assumed): \(result)")
        try Self.expectSettled(result, within: 30)
    }

    /// Settled within `frames` of first sight, to 1°, with at most 3° of
    /// overshoot, and silent after (one last integral step allowed).
    static func expectSettled(_ result: Convergence, within frames: Int) throws {
        let settle = try #require(result.framesToSettle, "\(result)")
        #expect(settle <= frames, "\(result)")
        #expect(result.overshoot <= 3, "\(result)")
        #expect(result.finalError <= 1, "\(result)")
        #expect(result.commandsAfterSettling <= 1, "\(result)")
    }

    @Test("with --tilt both axes settle on the face")
    func tiltSettles() throws {
        let left = Scene.left(forPan: 100), top = 150
        let summary = try Self.run(scene: Scene.path(left: left, top: top), frames: 75, tilt: true)
        let pan = try Convergence(summary, truth: Scene.pan(left: left), axis: \.panPosition)
        let tilt = try Convergence(summary, truth: Scene.tilt(top: top), axis: \.tiltPosition)
        print("turret with tilt: pan \(pan); tilt \(tilt)")
        for axis in [pan, tilt] {
            #expect((axis.framesToSettle ?? .max) <= 20, "\(axis)")
            #expect(axis.overshoot <= 3 && axis.finalError <= 1, "\(axis)")
        }
        #expect(Command.decode(summary.receivedBytes).contains { $0.axis == .tilt })
    }

    @Test("--invert-x flips the loop's direction")
    func invertedStepsAway() throws {
        let left = Scene.left(forPan: 180 - 100)
        // The virtual camera has no mirror, so the loop with --invert-x must
        // step away from the face: the sign really is flipped.
        let summary = try Self.run(scene: Scene.path(left: left), frames: 10, invertX: true)
        let first = try #require(summary.results.first { !$0.commands.isEmpty }?.commands.first)
        let facePan = Scene.pan(left: left)
        guard case .pan(let angle) = first else { Issue.record("first command \(first)"); return }
        #expect((Double(angle) - 90) * (facePan - 90) < 0, "with --invert-x the first step goes the other way: \(angle)° for a face at \(facePan)°")
    }
}
