/// The points of one face in MediaPipe's numbering (SPEC §8): the face mesh's
/// 468, then the iris of the subject's right eye (468–472: centre, then four
/// on its rim) and of the left eye (473–477), as MediaPipe's FaceMesh with
/// refined landmarks numbers them. x and y in frame pixels, z in x's scale
/// (negative towards the camera), so that sizes and angles can be computed
/// from them directly.
public struct FaceLandmarks: Sendable, Equatable {
    public static let count = 478

    public var points: [SIMD3<Float>]

    /// Wraps `points`, which must hold exactly `FaceLandmarks.count`.
    public init(points: [SIMD3<Float>]) {
        precondition(points.count == Self.count, "a face has \(Self.count) landmarks, got \(points.count)")
        self.points = points
    }

    public subscript(index: Int) -> SIMD3<Float> {
        get { points[index] }
        set { points[index] = newValue }
    }

    /// The point's x and y.
    public func position(_ index: Int) -> SIMD2<Float> { SIMD2(points[index].x, points[index].y) }

    /// The smallest box holding every point of the mesh.
    public var bounds: (min: SIMD2<Float>, max: SIMD2<Float>) {
        var low = position(0), high = low
        for point in points.prefix(468) {
            low = pointwiseMin(low, SIMD2(point.x, point.y))
            high = pointwiseMax(high, SIMD2(point.x, point.y))
        }
        return (low, high)
    }

    /// Named points the expressions, the pose and the crops use (the subject's sides).
    public enum Landmark {
        public static let rightEyeOuter = 33, rightEyeInner = 133, leftEyeInner = 362, leftEyeOuter = 263
        public static let rightEyeTop = 159, rightEyeBottom = 145, leftEyeTop = 386, leftEyeBottom = 374
        public static let rightIris = 468, leftIris = 473
        public static let upperLipInner = 13, lowerLipInner = 14, mouthRight = 61, mouthLeft = 291
        public static let noseTip = 1, noseBridge = 168, chin = 152, forehead = 10
        public static let rightBrowInner = 107, leftBrowInner = 336
        public static let rightCheek = 234, leftCheek = 454
    }
}
