import Geometry

/// What the expressions are read from: distances between landmarks in the
/// face's own axes (`FaceFrame`), in units of the face's size, so they do not
/// change with distance or a turned head. `sentry faces --json` prints them
/// for anyone calibrating their own thresholds.
public struct FaceMeasures: Sendable, Equatable, Codable {
    /// Each eye's opening over its width (the eye aspect ratio), subject's sides.
    public var eyeOpeningLeft: Float
    public var eyeOpeningRight: Float
    /// The inner lips' gap.
    public var mouthOpening: Float
    /// How far each mouth corner sits above the lips' middle (negative below).
    public var cornerLiftLeft: Float
    public var cornerLiftRight: Float
    /// The mouth's width.
    public var mouthWidth: Float
    /// The inner brows' height above the eyes' top.
    public var browHeight: Float

    public init(_ face: FaceLandmarks) {
        typealias L = FaceLandmarks.Landmark
        let frame = FaceFrame(face)
        func at(_ index: Int) -> SIMD2<Float> {
            let local = frame.local(face[index])
            return SIMD2(local.x, local.y)
        }
        func distance(_ a: Int, _ b: Int) -> Float {
            let d = at(a) - at(b)
            return (d * d).sum().squareRoot()
        }
        /// Three lid-to-lid gaps over the corners' distance (a tuple, not an array: nothing to allocate per frame).
        func opening(_ lids: ((Int, Int), (Int, Int), (Int, Int)), corners: (Int, Int)) -> Float {
            let gaps = distance(lids.0.0, lids.0.1) + distance(lids.1.0, lids.1.1) + distance(lids.2.0, lids.2.1)
            return gaps / 3 / max(distance(corners.0, corners.1), 1e-6)
        }
        eyeOpeningRight = opening(((159, 145), (158, 153), (160, 144)), corners: (L.rightEyeOuter, L.rightEyeInner))
        eyeOpeningLeft = opening(((386, 374), (385, 380), (387, 373)), corners: (L.leftEyeInner, L.leftEyeOuter))
        mouthOpening = distance(L.upperLipInner, L.lowerLipInner)
        let middle = (at(L.upperLipInner) + at(L.lowerLipInner)) / 2
        cornerLiftRight = at(L.mouthRight).y - middle.y
        cornerLiftLeft = at(L.mouthLeft).y - middle.y
        mouthWidth = distance(L.mouthRight, L.mouthLeft)
        browHeight = (at(L.rightBrowInner).y - at(L.rightEyeTop).y + at(L.leftBrowInner).y - at(L.leftEyeTop).y) / 2
    }
}
