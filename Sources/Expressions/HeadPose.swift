import FoundationEssentials
import Glibc
import Geometry

/// The head's orientation from its landmarks (SPEC §8), in degrees: `roll` is
/// the face's rotation in the image plane, positive clockwise as seen in the
/// image; `yaw` is positive when the face turns toward the image's right;
/// `pitch` positive when it looks up.
public struct HeadPose: Sendable, Equatable {
    public var yaw: Float
    public var pitch: Float
    public var roll: Float

    public init(yaw: Float, pitch: Float, roll: Float) {
        (self.yaw, self.pitch, self.roll) = (yaw, pitch, roll)
    }

    /// The pose of `frame`'s axes, as turns applied in this order: pitch (about
    /// the face's across axis), yaw (about its up axis), then roll in the image
    /// plane. Roll comes from the across axis, which pitch leaves alone and yaw
    /// only shortens; yaw and pitch from the forward axis with the roll undone.
    public init(_ frame: FaceFrame) {
        let degrees: Float = 180 / .pi
        let rollAngle = atan2(frame.across.y, frame.across.x)
        let (s, c) = (sin(rollAngle), cos(rollAngle))
        let forward = frame.forward
        let unrolled = SIMD3(forward.x * c + forward.y * s, -forward.x * s + forward.y * c, forward.z)
        yaw = atan2(unrolled.x, -unrolled.z) * degrees
        pitch = asin(max(-1, min(1, -unrolled.y))) * degrees
        roll = rollAngle * degrees
    }
}

/// The face's own axes in the frame's coordinates (x right, y down, z away
/// from the camera, as the mesh gives them): `across` from the subject's right
/// to their left, `up` from chin to brow, `forward` out of the face toward
/// the camera; and its size, the distance between the outer eye corners.
///
/// Measuring in these axes, in units of that size, is what makes the
/// expressions hold when the head turns or moves away.
public struct FaceFrame: Sendable {
    public let origin: SIMD3<Float>
    public let across: SIMD3<Float>
    public let up: SIMD3<Float>
    public let forward: SIMD3<Float>
    public let size: Float

    /// On a face looking straight at the camera, the line from the chin to the
    /// nose bridge leans toward the camera by this much (the median over the
    /// 494 labelled photos of docs/expressions.md): the axes are turned back by
    /// it, so that such a face has pitch 0.
    static let chinLean: Float = 14.5 * .pi / 180

    public init(_ face: FaceLandmarks) {
        typealias L = FaceLandmarks.Landmark
        // Two lines across the face (eyes, cheeks) and one up its middle, so that no single point decides.
        let acrossSum = (face[L.leftEyeOuter] - face[L.rightEyeOuter]) + (face[L.leftCheek] - face[L.rightCheek])
        let across = Self.normalised(acrossSum)
        let rawUp = face[L.noseBridge] - face[L.chin]
        let chinLine = Self.normalised(rawUp - (rawUp * across).sum() * across)
        // across × the chin line: toward the camera for an upright face (z grows away from it).
        let leaning = SIMD3(
            across.y * chinLine.z - across.z * chinLine.y, across.z * chinLine.x - across.x * chinLine.z,
            across.x * chinLine.y - across.y * chinLine.x)
        let (s, c) = (sin(Self.chinLean), cos(Self.chinLean))
        self.across = across
        up = chinLine * c - leaning * s
        forward = leaning * c + chinLine * s
        origin = (face[L.leftEyeOuter] + face[L.rightEyeOuter]) / 2
        let eyes = face[L.leftEyeOuter] - face[L.rightEyeOuter]
        size = max((eyes * eyes).sum().squareRoot(), .leastNormalMagnitude)
    }

    /// A point in the face's axes, in face sizes: x toward the subject's left,
    /// y up, z toward the camera.
    public func local(_ point: SIMD3<Float>) -> SIMD3<Float> {
        let offset = point - origin
        return SIMD3((offset * across).sum(), (offset * up).sum(), (offset * forward).sum()) / size
    }

    static func normalised(_ vector: SIMD3<Float>) -> SIMD3<Float> {
        let length = (vector * vector).sum().squareRoot()
        return length > 0 ? vector / length : SIMD3(1, 0, 0)
    }
}
