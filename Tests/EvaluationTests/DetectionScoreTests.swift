import Evaluation
import Geometry
import Testing

@Suite("Detection scores against labelled faces")
struct DetectionScoreTests {
    let face = Box(x: 0, y: 0, width: 10, height: 10)

    @Test("a detection counts once, for the face it overlaps best")
    func oneToOne() {
        var score = DetectionScore(threshold: 0.5)
        let other = Box(x: 100, y: 0, width: 10, height: 10)
        // Two detections on the first face: one found, one false alarm; the second face missed.
        score.add(faces: [face, other], detections: [Box(x: 1, y: 0, width: 10, height: 10), face])
        #expect(score.found == 1 && score.missed == 1 && score.falseAlarms == 1)
        #expect(score.recall == 0.5 && score.precision == 0.5 && score.f1 == 0.5)
    }

    @Test("the overlap threshold decides: IoU 0.36 is found at 0.3, false at 0.5")
    func threshold() {
        let shifted = Box(x: 0, y: 0, width: 10, height: 6)  // IoU 0.6
        let half = Box(x: 4, y: 0, width: 10, height: 10)  // IoU 60 / 140 = 0.43
        var strict = DetectionScore(threshold: 0.5), loose = DetectionScore(threshold: 0.3)
        for index in 0..<2 {
            strict.add(faces: [face], detections: [index == 0 ? shifted : half])
            loose.add(faces: [face], detections: [index == 0 ? shifted : half])
        }
        #expect(strict.found == 1 && strict.missed == 1 && strict.falseAlarms == 1)
        #expect(loose.found == 2 && loose.missed == 0 && loose.falseAlarms == 0)
    }

    @Test("a detection on an ignored face is neither found nor false; no faces at all scores zero")
    func ignored() {
        var score = DetectionScore(threshold: 0.5)
        score.add(faces: [], ignored: [face], detections: [face])
        #expect(score.found == 0 && score.missed == 0 && score.falseAlarms == 0)
        #expect(score.recall == 0 && score.precision == 0 && score.f1 == 0)
    }
}
