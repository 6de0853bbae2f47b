#if canImport(Glibc)
    import Glibc
#endif
import Imaging

/// The range as the camera and the turret see it: both at the origin, 1.2 m
/// above the floor, looking along `z`; servo angles are SPEC §2's with
/// `--fov` (pan 90 straight ahead, larger to the right; tilt 90 level,
/// larger downward). The camera maps angles to pixels linearly, as
/// `--fov` assumes, so where a face shows and where the dart flies agree
/// exactly; a real lens adds its own error on top, which calibration.md is about.
///
/// A person is a head (a face photo), a shirt and trousers, of an adult's
/// sizes: the detector's box on the face is `faceWidth` wide, and the torso
/// that a shot must hit spans `torsoHalfWidth` either side of the face's
/// line, from `shoulderDrop` to `hipDrop` below the face's centre.
public struct RangeWorld: Sendable {
    public var fieldOfView = 60.0
    public var width = 640
    public var height = 480
    /// Metres: the turret's height, and a face's centre's.
    public var turretHeight = 1.2
    public var faceHeight = 1.6
    /// Metres: the face's box, and the torso a shot must hit (shoulders to hips).
    public var faceWidth = 0.15
    public var torsoHalfWidth = 0.2
    public var shoulderDrop = 0.18
    public var hipDrop = 0.75
    /// Metres either side of the face's centre, and above and below it, that
    /// count as the face: its box grown by a quarter on each side, the zone
    /// an armed sentry promises never to fire into (`FirePoint`).
    public var faceZoneHalfSize = 0.15 * 0.75

    public init() {}

    /// Pixels per degree, on both axes.
    public var pixelsPerDegree: Double { Double(width) / fieldOfView }

    /// Servo angles (pan, tilt) of a point `x` right, `y` above the floor, `z` ahead.
    public func angles(x: Double, y: Double, z: Double) -> (pan: Double, tilt: Double) {
        let horizontal = (x * x + z * z).squareRoot()
        return (90 + degrees(atan2(x, z)), 90 - degrees(atan2(y - turretHeight, horizontal)))
    }

    /// The picture's pixel for servo angles.
    public func pixel(pan: Double, tilt: Double) -> (x: Double, y: Double) {
        (Double(width) / 2 + (pan - 90) * pixelsPerDegree, Double(height) / 2 + (tilt - 90) * pixelsPerDegree)
    }

    /// Where a dart sent along `pan`, `tilt` meets the plane at depth `z`:
    /// its place across (`x`) and height above the floor (`y`), metres.
    public func dartPoint(pan: Double, tilt: Double, depth z: Double) -> (x: Double, y: Double) {
        let across = radians(pan - 90), up = radians(90 - tilt)
        let x = z * tan(across)
        return (x, turretHeight + (x * x + z * z).squareRoot() * tan(up))
    }
}

@inline(__always) func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
@inline(__always) func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
