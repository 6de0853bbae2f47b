import FoundationEssentials
import Glibc
import Geometry

/// The face's expression as ARKit's blend shapes that a face mesh can carry
/// (SPEC §8), each 0 (neutral) to 1 (fully shown); Left and Right are the
/// subject's own sides.
public struct ExpressionScores: Sendable, Equatable, Codable {
    public var eyeBlinkLeft: Float
    public var eyeBlinkRight: Float
    public var jawOpen: Float
    public var mouthSmileLeft: Float
    public var mouthSmileRight: Float
    public var browInnerUp: Float

    /// The names, in the order `values` gives them.
    public static let names = ["eyeBlinkLeft", "eyeBlinkRight", "jawOpen", "mouthSmileLeft", "mouthSmileRight", "browInnerUp"]

    public var values: [Float] { [eyeBlinkLeft, eyeBlinkRight, jawOpen, mouthSmileLeft, mouthSmileRight, browInnerUp] }

    public init(eyeBlinkLeft: Float, eyeBlinkRight: Float, jawOpen: Float, mouthSmileLeft: Float, mouthSmileRight: Float, browInnerUp: Float) {
        (self.eyeBlinkLeft, self.eyeBlinkRight, self.jawOpen) = (eyeBlinkLeft, eyeBlinkRight, jawOpen)
        (self.mouthSmileLeft, self.mouthSmileRight, self.browInnerUp) = (mouthSmileLeft, mouthSmileRight, browInnerUp)
    }

    /// The scores from the points' measures and the mouth's look in the frame
    /// (`.neutral` where there is no frame behind the points).
    public init(_ measures: FaceMeasures, appearance: MouthAppearance = .neutral, calibration: ExpressionCalibration = .standard) {
        let c = calibration
        eyeBlinkLeft = Self.ramp(measures.eyeOpeningLeft, from: c.eyeOpen, to: c.eyeClosed)
        eyeBlinkRight = Self.ramp(measures.eyeOpeningRight, from: c.eyeOpen, to: c.eyeClosed)
        jawOpen = Self.ramp(measures.mouthOpening, from: c.mouthClosed, to: c.mouthOpen)
        func smile(_ lift: Float) -> Float {
            let look =
                c.smileBrightnessWeight * appearance.brightness + c.smileContrastWeight * appearance.contrast
                + c.smileHighlightsWeight * appearance.highlights
            return 1 / (1 + exp(-(c.smileLiftWeight * lift + c.smileWidthWeight * measures.mouthWidth + look + c.smileBias)))
        }
        mouthSmileLeft = smile(measures.cornerLiftLeft)
        mouthSmileRight = smile(measures.cornerLiftRight)
        browInnerUp = Self.ramp(measures.browHeight, from: c.browRest, to: c.browRaised)
    }

    /// Where `value` lies from `from` (0) to `to` (1), clamped.
    static func ramp(_ value: Float, from: Float, to: Float) -> Float {
        guard from != to else { return 0 }
        return min(max((value - from) / (to - from), 0), 1)
    }
}

/// The measures that mean neutral and fully shown. `standard` was fitted on
/// labelled photos by tools/calibrate-expressions (docs/guide/faces.md says which
/// and how well).
public struct ExpressionCalibration: Sendable, Equatable {
    /// Eye opening (aspect ratio) of an open and of a closed eye.
    public var eyeOpen: Float
    public var eyeClosed: Float
    /// Inner lip gap, in face sizes, of a closed and of a wide open mouth.
    public var mouthClosed: Float
    public var mouthOpen: Float
    /// A side's smile is a logistic of its corner's lift, the mouth's width and the
    /// mouth's look inside (`MouthAppearance`: teeth).
    public var smileLiftWeight: Float
    public var smileWidthWeight: Float
    public var smileBrightnessWeight: Float
    public var smileContrastWeight: Float
    public var smileHighlightsWeight: Float
    public var smileBias: Float
    /// Inner brow height above the eye, at rest and raised.
    public var browRest: Float
    public var browRaised: Float

    public static let standard = ExpressionCalibration(
        eyeOpen: 0.427, eyeClosed: 0.083, mouthClosed: 0.03, mouthOpen: 0.45,
        smileLiftWeight: 66.28, smileWidthWeight: 3.01, smileBrightnessWeight: 5.458, smileContrastWeight: 5.456,
        smileHighlightsWeight: -2.690, smileBias: -3.62, browRest: 0.17, browRaised: 0.32)
}

/// Where each iris sits between its eye's corners (SPEC §8), per axis -1...1:
/// x toward the image's right for an upright face (the subject's left), y up;
/// 0, 0 is looking straight out of the face.
public struct Gaze: Sendable, Equatable, Codable {
    public var left: SIMD2<Float>
    public var right: SIMD2<Float>

    public init(left: SIMD2<Float>, right: SIMD2<Float>) { (self.left, self.right) = (left, right) }

    public init(_ face: FaceLandmarks) {
        typealias L = FaceLandmarks.Landmark
        let frame = FaceFrame(face)
        func eye(iris: Int, corners: (Int, Int), lids: (Int, Int)) -> SIMD2<Float> {
            let a = frame.local(face[corners.0]), b = frame.local(face[corners.1])
            let top = frame.local(face[lids.0]), bottom = frame.local(face[lids.1])
            let center = SIMD2((a.x + b.x) / 2, (top.y + bottom.y) / 2)
            let half = SIMD2(max(abs(b.x - a.x) / 2, 1e-6), max(abs(b.x - a.x) / 2, 1e-6))
            let position = frame.local(face[iris])
            let gaze = (SIMD2(position.x, position.y) - center) / half
            return pointwiseMin(pointwiseMax(gaze, SIMD2(repeating: -1)), SIMD2(repeating: 1))
        }
        right = eye(iris: L.rightIris, corners: (L.rightEyeOuter, L.rightEyeInner), lids: (L.rightEyeTop, L.rightEyeBottom))
        left = eye(iris: L.leftIris, corners: (L.leftEyeInner, L.leftEyeOuter), lids: (L.leftEyeTop, L.leftEyeBottom))
    }
}
