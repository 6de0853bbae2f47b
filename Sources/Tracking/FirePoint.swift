import Geometry

/// Where an armed turret may fire (SPEC §8's safety): never at a face. The
/// fire point (`--fire-below` face heights under the target's centre, kept
/// inside the frame) must lie outside every face's box grown by a margin;
/// near the bottom of the frame the clamping can pull it back onto the
/// face, and then no shot is taken.
public enum FirePoint {
    /// How far around a face's box the fire point must stay, as a fraction
    /// of the box's size on each side: a detector's box is tighter than the
    /// head (it stops at the brow and the chin).
    public static let faceMargin = 0.25
    /// The smallest `--fire-below` whose point clears the target's own face:
    /// half a face height to the box's edge, plus the margin, and a little more.
    public static let smallestBelow = 1.0

    /// True when `point` (frame pixels) lies outside every box in `faces`
    /// grown by `faceMargin`.
    public static func isClear(_ point: (x: Double, y: Double), of faces: [Box]) -> Bool {
        faces.allSatisfy { face in
            let marginX = Double(face.width) * faceMargin, marginY = Double(face.height) * faceMargin
            let inX = point.x >= Double(face.x) - marginX && point.x <= Double(face.x + face.width) + marginX
            let inY = point.y >= Double(face.y) - marginY && point.y <= Double(face.y + face.height) + marginY
            return !(inX && inY)
        }
    }
}

/// Why an armed sentry holds fire at a locked target, for the status line
/// and the console: a person must see why a turret that could fire does not.
public enum HeldFire: String, Sendable, Equatable, Codable {
    /// The fire point (after clamping into the frame) lies on a face.
    case firePointOnFace = "fire point on a face"
    /// No tilt servo aims the fire point's height (the tilt was turned off
    /// while running, with no `--pan-only-below-heads`).
    case noTilt = "no tilt: the fire point's height is not aimed"
    /// `--spare known`: the target is one of the household `--known` enrols.
    case household = "one of the household (--spare known)"
    /// `--spare NAME`: the target is the person named.
    case sparedByName = "spared by name (--spare NAME)"
    /// `--spare known` or `--spare NAME`: who the target is has not been read yet (or cannot be: no mesh on it).
    case unrecognised = "not yet recognised (--spare waits to know who it is)"
}
