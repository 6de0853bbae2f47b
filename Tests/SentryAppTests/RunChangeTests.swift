import FaceDetection
import Geometry
import Imaging
import Testing
import Tracking

@testable import SentryApp

/// Faces with scores, as BlazeFace reports them.
private final class ScoredFaces: FaceDetector {
    let faces: [Box]
    let lastScores: [Float]
    init(_ faces: [Box], scores: [Float]) {
        self.faces = faces
        lastScores = scores
    }
    func detectFaces(in image: GrayImage, into boxes: inout [Box]) { boxes = faces }
}

@Suite("Changes to the run and each frame's outcome are values")
struct RunChangeTests {
    private func frame(_ index: Int) -> Frame {
        Frame(image: GrayImage(width: 640, height: 480), timestamp: Double(index) / 30, index: index)
    }

    @Test("changes from other threads wait coalesced: the newest settings, detector and steering win, nudges add up, each taken once")
    func changesCoalesce() async {
        let changes = RunChanges()
        // A camera reopening for minutes while a console and a broker keep asking: at most one of each kind waits.
        for index in 0..<1000 {
            var settings = PipelineSettings()
            settings.deadband = index % 5
            changes.submit(.settings(settings))
            changes.submit(.detector(DetectorHandOff(detector: FixedFaces([]), name: "detector \(index)")))
        }
        changes.submit(.steer(.scan))
        await Task.detached { changes.submit(.steer(.nudge(pan: 5, tilt: 0))) }.value
        changes.submit(.steer(.nudge(pan: -2, tilt: 3)))
        let taken = changes.takeAll()
        #expect(taken.count == 3)
        guard taken.count == 3, case .settings(let settings) = taken[0], case .detector(let detector) = taken[1], case .steer(let steering) = taken[2] else {
            Issue.record("\(taken)")
            return
        }
        #expect(settings.deadband == 999 % 5 && detector.name == "detector 999" && steering == .nudge(pan: 3, tilt: 3))
        #expect(changes.takeAll().isEmpty)
        changes.submit(.steer(.nudge(pan: 1, tilt: 1)))
        changes.submit(.steer(.auto))
        #expect(changes.takeAll().count == 1)
    }

    @Test("each face travels with its own score; a detector without scores gives none")
    func scoresTravelWithFaces() throws {
        let boxes = [Box(x: 10, y: 10, width: 50, height: 50), Box(x: 300, y: 200, width: 80, height: 80)]
        let scored = Pipeline(detector: ScoredFaces(boxes, scores: [0.6, 0.9]), output: RecordingOutput(), settings: PipelineSettings())
        let result = try scored.process(frame(0))
        #expect(result.detections == [DetectedFace(box: boxes[0], score: 0.6), DetectedFace(box: boxes[1], score: 0.9)])
        #expect(result.followedFace == nil, "no landmarks, no reading")
        let unscored = Pipeline(detector: FixedFaces(boxes), output: RecordingOutput(), settings: PipelineSettings())
        #expect(try unscored.process(frame(0)).detections.map(\.score) == [nil, nil])
    }

    @Test("a new detector applied between frames names itself in the next outcome")
    func detectorChange() throws {
        let pipeline = Pipeline(detector: FixedFaces([]), detectorName: "first", output: RecordingOutput(), settings: PipelineSettings())
        _ = try pipeline.process(frame(0))
        pipeline.apply(.detector(DetectorHandOff(detector: FixedFaces([]), name: "second")), frameWidth: 640, frameHeight: 480)
        #expect(pipeline.detectorName == "second")
    }
}
