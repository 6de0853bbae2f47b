import FoundationEssentials
import Glibc

/// A rotated square of the frame that a landmark network looks at
/// (MediaPipe's normalised rect, in pixels): its centre, its side, and its
/// rotation in radians, positive clockwise as seen in the image (y down).
public struct FaceRegion: Sendable, Equatable {
    public var center: SIMD2<Float>
    public var side: Float
    public var rotation: Float

    public init(center: SIMD2<Float>, side: Float, rotation: Float) {
        (self.center, self.side, self.rotation) = (center, side, rotation)
    }

    /// MediaPipe's rect from a box (DetectionsToRects + RectTransformation):
    /// centred on the box, square on its longer side times `scale`, turned so
    /// that `from` → `to` (two points of the face that lie level on an upright
    /// face, such as the eyes) is horizontal in the crop.
    public init(boxMin: SIMD2<Float>, boxMax: SIMD2<Float>, from: SIMD2<Float>, to: SIMD2<Float>, scale: Float) {
        let size = boxMax - boxMin
        center = boxMin + size / 2
        side = max(size.x, size.y) * scale
        rotation = Self.rotation(from: from, to: to)
    }

    /// The angle that makes `from` → `to` horizontal, in -π..<π (MediaPipe's
    /// `-atan2(y0 - y1, x1 - x0)`, normalised); 0 when the points coincide.
    static func rotation(from: SIMD2<Float>, to: SIMD2<Float>) -> Float {
        guard from != to else { return 0 }
        let angle = -atan2(from.y - to.y, to.x - from.x)
        return angle - 2 * .pi * ((angle + .pi) / (2 * .pi)).rounded(.down)
    }

    /// Where a point of the crop lands in the frame: `unit` is the point in the
    /// crop's own fractions (0...1 from its top-left corner along its rotated axes).
    public func framePoint(_ unit: SIMD2<Float>) -> SIMD2<Float> {
        let offset = (unit - 0.5) * side
        let (s, c) = (sin(rotation), cos(rotation))
        return center + SIMD2(offset.x * c - offset.y * s, offset.x * s + offset.y * c)
    }
}
