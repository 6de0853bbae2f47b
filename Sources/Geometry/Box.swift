/// An axis-aligned rectangle in frame pixels, origin at the top-left corner.
public struct Box: Hashable, Sendable, Codable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var area: Int { width * height }

    /// The centre in pixels (may be fractional).
    public var center: (x: Double, y: Double) {
        (Double(x) + Double(width) / 2, Double(y) + Double(height) / 2)
    }

    /// Intersection over union with another box, 0 when they do not overlap.
    public func intersectionOverUnion(_ other: Box) -> Double {
        let left = max(x, other.x), right = min(x + width, other.x + other.width)
        let top = max(y, other.y), bottom = min(y + height, other.y + other.height)
        guard right > left, bottom > top else { return 0 }
        let intersection = Double((right - left) * (bottom - top))
        return intersection / (Double(area) + Double(other.area) - intersection)
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}
