import Foundation
import Geometry

/// A hand-made face: the landmarks the expressions read, placed by a few
/// parameters in the face's own axes (x toward the subject's left, y up, z
/// toward the camera, in eye-corner distances), then turned, scaled and moved
/// into the image. Every other point sits at the face's centre.
struct SyntheticFace {
    /// Lid gap over eye width, per side (0.45 open, 0 shut).
    var eyeOpeningLeft: Float = 0.45
    var eyeOpeningRight: Float = 0.45
    var mouthGap: Float = 0.02
    var mouthWidth: Float = 0.75
    var cornerLiftLeft: Float = -0.05
    var cornerLiftRight: Float = -0.05
    var browHeight: Float = 0.17
    /// Each iris' offset from its eye's centre, in eye-corner distances.
    var irisLeft = SIMD2<Float>(0, 0)
    var irisRight = SIMD2<Float>(0, 0)
    /// Degrees, as HeadPose measures them.
    var yaw: Float = 0
    var pitch: Float = 0
    var roll: Float = 0
    /// Pixels between the outer eye corners, and where the face's centre is.
    var size: Float = 80
    var center = SIMD2<Float>(320, 240)

    var landmarks: FaceLandmarks {
        var local = [SIMD3<Float>](repeating: SIMD3(0, -0.4, 0), count: FaceLandmarks.count)
        func eye(side: Float, opening: Float, outer: Int, inner: Int, lids: [(Int, Int)], iris: Int, gaze: SIMD2<Float>) {
            local[outer] = SIMD3(0.5 * side, 0, 0)
            local[inner] = SIMD3(0.2 * side, 0, 0)
            let half = opening * 0.3 / 2
            for (position, (top, bottom)) in zip([Float(0.28), 0.35, 0.42], lids) {
                local[top] = SIMD3(position * side, half, 0.02)
                local[bottom] = SIMD3(position * side, -half, 0.02)
            }
            local[iris] = SIMD3(0.35 * side + gaze.x, gaze.y, 0.03)
        }
        eye(
            side: -1, opening: eyeOpeningRight, outer: 33, inner: 133, lids: [(158, 153), (159, 145), (160, 144)], iris: 468,
            gaze: irisRight)
        eye(
            side: 1, opening: eyeOpeningLeft, outer: 263, inner: 362, lids: [(385, 380), (386, 374), (387, 373)], iris: 473,
            gaze: irisLeft)
        local[234] = SIMD3(-0.75, -0.35, -0.4)
        local[454] = SIMD3(0.75, -0.35, -0.4)
        local[168] = SIMD3(0, 0.05, 0)
        // The chin sits back from the nose bridge, as on a real face (see FaceFrame.chinLean).
        local[152] = SIMD3(0, -1.25, -1.3 * tan(14.5 * .pi / 180))
        local[13] = SIMD3(0, -0.8 + mouthGap / 2, 0.1)
        local[14] = SIMD3(0, -0.8 - mouthGap / 2, 0.1)
        local[61] = SIMD3(-mouthWidth / 2, -0.8 + cornerLiftRight, 0.05)
        local[291] = SIMD3(mouthWidth / 2, -0.8 + cornerLiftLeft, 0.05)
        // The brows' height is measured from each eye's middle upper lid.
        local[107] = SIMD3(-0.15, local[159].y + browHeight, 0.05)
        local[336] = SIMD3(0.15, local[386].y + browHeight, 0.05)
        return FaceLandmarks(points: local.map(place))
    }

    /// Face axes to image pixels: turned by pitch (about x), yaw (about y), then
    /// roll in the image plane; y and z flipped to the image's (y down, z away).
    private func place(_ point: SIMD3<Float>) -> SIMD3<Float> {
        let radians: Float = .pi / 180
        let (sp, cp) = (sin(pitch * radians), cos(pitch * radians))
        let (sy, cy) = (sin(yaw * radians), cos(yaw * radians))
        var p = SIMD3(point.x, point.y * cp + point.z * sp, -point.y * sp + point.z * cp)
        p = SIMD3(p.x * cy + p.z * sy, p.y, -p.x * sy + p.z * cy)
        var image = SIMD3(p.x, -p.y, -p.z)
        let (sr, cr) = (sin(roll * radians), cos(roll * radians))
        image = SIMD3(image.x * cr - image.y * sr, image.x * sr + image.y * cr, image.z)
        return image * size + SIMD3(center.x, center.y, 0)
    }
}

extension FaceLandmarks {
    /// Mirror twins among the points a `SyntheticFace` places (the others sit on the middle line).
    static let twins: [(Int, Int)] = [
        (33, 263), (133, 362), (159, 386), (145, 374), (158, 385), (153, 380), (160, 387), (144, 373), (468, 473),
        (61, 291), (107, 336), (234, 454),
    ]

    /// The face in a mirror `width` pixels wide: x flipped and each twin's
    /// number swapped, so the subject's left stays the subject's left.
    func mirrored(width: Float) -> FaceLandmarks {
        var mirrored = FaceLandmarks(points: points.map { SIMD3(width - $0.x, $0.y, $0.z) })
        for (a, b) in Self.twins { mirrored.points.swapAt(a, b) }
        return mirrored
    }
}
