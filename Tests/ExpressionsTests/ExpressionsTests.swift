import Expressions
import Geometry
import Testing

@Suite("Expressions, head pose and gaze from hand-made points")
struct ExpressionsTests {
    static func scores(_ face: SyntheticFace) -> ExpressionScores { ExpressionScores(FaceMeasures(face.landmarks)) }

    /// The states after each face in turn, a frame apart at 30 fps.
    static func states(_ faces: [SyntheticFace]) -> [Set<ExpressionState>] {
        var states = ExpressionStates()
        return faces.enumerated().map { index, face in states.update(scores(face), at: Double(index) / 30) }
    }

    @Test("a neutral face shows no state and scores near zero")
    func neutral() {
        let scores = Self.scores(SyntheticFace())
        #expect(scores.values.allSatisfy { $0 < 0.2 }, "\(scores)")
        #expect(Self.states([SyntheticFace()]).last == [])
    }

    @Test("smile, blink and mouth-open turn on above 0.6 and off only below 0.4", arguments: [ExpressionState.smile, .blink, .mouthOpen])
    func hysteresis(state: ExpressionState) {
        // A face whose one score for `state` is `level`, found by searching the parameter.
        func face(_ level: Float) -> SyntheticFace {
            var best = SyntheticFace(), bestError = Float.infinity
            for step in 0...400 {
                var face = SyntheticFace()
                let t = Float(step) / 400
                switch state {
                case .smile: (face.cornerLiftLeft, face.cornerLiftRight, face.mouthWidth) = (-0.1 + 0.3 * t, -0.1 + 0.3 * t, 0.75 + 0.3 * t)
                case .blink: (face.eyeOpeningLeft, face.eyeOpeningRight) = (0.45 - 0.45 * t, 0.45 - 0.45 * t)
                default: face.mouthGap = 0.6 * t
                }
                let scores = Self.scores(face)
                let value =
                    switch state {
                    case .smile: (scores.mouthSmileLeft + scores.mouthSmileRight) / 2
                    case .blink: min(scores.eyeBlinkLeft, scores.eyeBlinkRight)
                    default: scores.jawOpen
                    }
                if abs(value - level) < bestError { (best, bestError) = (face, abs(value - level)) }
            }
            return best
        }
        let levels: [Float] = [0.1, 0.5, 0.65, 0.5, 0.45, 0.35, 0.5, 0.9]
        let expected = [false, false, true, true, true, false, false, true]
        let seen = Self.states(levels.map(face)).map { $0.contains(state) }
        #expect(seen == expected, "\(state) at \(levels)")
    }

    @Test("a wink needs the other eye open and lasts 0.15 s before it counts")
    func wink() {
        var closedLeft = SyntheticFace()
        closedLeft.eyeOpeningLeft = 0.02
        let frames = Array(repeating: SyntheticFace(), count: 2) + Array(repeating: closedLeft, count: 8) + [SyntheticFace()]
        let winks = Self.states(frames).map { $0.contains(.winkLeft) }
        // Closed from frame 2 (t = 0.067 s): on at frame 7 (0.233 s, 0.167 s later), off when it opens.
        #expect(winks == [false, false, false, false, false, false, false, true, true, true, false])
        #expect(Self.states(frames).allSatisfy { !$0.contains(.winkRight) && !$0.contains(.blink) })
    }

    @Test("a two-eye blink never yields a wink, even when one eye closes and opens a frame before the other")
    func blinkIsNoWink() {
        func face(_ left: Float, _ right: Float) -> SyntheticFace {
            var face = SyntheticFace()
            (face.eyeOpeningLeft, face.eyeOpeningRight) = (left, right)
            return face
        }
        let blink = [
            face(0.45, 0.45), face(0.2, 0.45), face(0.02, 0.3), face(0.01, 0.02), face(0.01, 0.01), face(0.01, 0.01),
            face(0.15, 0.01), face(0.45, 0.15), face(0.45, 0.45),
        ]
        let states = Self.states(blink)
        #expect(states.allSatisfy { !$0.contains(.winkLeft) && !$0.contains(.winkRight) }, "\(states)")
        #expect(states.contains { $0.contains(.blink) })
    }

    @Test("mirrored points swap the Left and Right scores and negate yaw and roll")
    func mirror() {
        var face = SyntheticFace()
        (face.eyeOpeningLeft, face.cornerLiftLeft, face.yaw, face.roll, face.pitch) = (0.12, 0.1, 15, 10, 5)
        let landmarks = face.landmarks
        let mirrored = landmarks.mirrored(width: 640)
        let scores = ExpressionScores(FaceMeasures(landmarks)), flipped = ExpressionScores(FaceMeasures(mirrored))
        #expect(abs(scores.eyeBlinkLeft - flipped.eyeBlinkRight) < 1e-4 && abs(scores.eyeBlinkRight - flipped.eyeBlinkLeft) < 1e-4)
        #expect(abs(scores.mouthSmileLeft - flipped.mouthSmileRight) < 1e-4)
        #expect(abs(scores.eyeBlinkLeft - scores.eyeBlinkRight) > 0.3, "the test face is lopsided")
        let pose = HeadPose(FaceFrame(landmarks)), mirroredPose = HeadPose(FaceFrame(mirrored))
        #expect(abs(pose.yaw + mirroredPose.yaw) < 0.01 && abs(pose.roll + mirroredPose.roll) < 0.01)
        #expect(abs(pose.pitch - mirroredPose.pitch) < 0.01)
    }

    @Test(
        "the pose reads back yaw, pitch and roll as the face was turned",
        arguments: [(20, 0, 0), (-30, 0, 0), (0, 15, 0), (0, -15, 0), (0, 0, 20), (25, -10, -15)] as [(Float, Float, Float)])
    func pose(angles: (Float, Float, Float)) {
        var face = SyntheticFace()
        (face.yaw, face.pitch, face.roll) = angles
        let pose = HeadPose(FaceFrame(face.landmarks))
        #expect(abs(pose.yaw - angles.0) < 1 && abs(pose.pitch - angles.1) < 1 && abs(pose.roll - angles.2) < 1, "\(pose)")
    }

    @Test("scores hold when the head turns, tilts or moves away: within 0.05 of the upright face's")
    func poseInvariance() {
        var face = SyntheticFace()
        (face.eyeOpeningLeft, face.mouthGap, face.cornerLiftRight) = (0.15, 0.2, 0.05)
        let upright = Self.scores(face)
        for (yaw, pitch, roll, size) in [(30, 0, 0, 80), (0, 20, 0, 80), (0, 0, 40, 80), (-25, 10, -20, 30)] as [(Float, Float, Float, Float)] {
            (face.yaw, face.pitch, face.roll, face.size) = (yaw, pitch, roll, size)
            let turned = Self.scores(face)
            let worst = zip(upright.values, turned.values).map { abs($0 - $1) }.max()!
            #expect(worst < 0.05, "yaw \(yaw) pitch \(pitch) roll \(roll): \(turned) vs \(upright)")
        }
    }

    @Test("gaze: the iris at an eye's centre is 0, toward the subject's left corner +x, above the centre +y")
    func gaze() {
        var face = SyntheticFace()
        #expect(abs(Gaze(face.landmarks).left.x) < 1e-4 && abs(Gaze(face.landmarks).right.y) < 1e-4)
        (face.irisLeft, face.irisRight, face.yaw) = (SIMD2(0.1, 0.05), SIMD2(-0.1, 0), 15)
        let gaze = Gaze(face.landmarks)
        #expect(abs(gaze.left.x - 0.1 / 0.15) < 0.02 && abs(gaze.left.y - 0.05 / 0.15) < 0.02, "\(gaze)")
        #expect(abs(gaze.right.x + 0.1 / 0.15) < 0.02, "\(gaze)")
        face.irisLeft = SIMD2(1, 1)
        #expect(Gaze(face.landmarks).left == SIMD2(1, 1))
    }
}
