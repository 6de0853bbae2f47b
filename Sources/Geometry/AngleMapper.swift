/// Servo angles for one target.
public struct Aim: Hashable, Sendable {
    public var pan: Int
    public var tilt: Int

    public init(pan: Int, tilt: Int) {
        self.pan = pan
        self.tilt = tilt
    }
}

/// Turns a point in the frame into servo angles with the offset-range formula
/// of SPEC §2: the frame maps linearly onto `offset ... 180 - offset` degrees.
public struct AngleMapper: Hashable, Sendable {
    /// The valid range of `offset`: it must leave a non-empty output range.
    public static let offsetRange = 0...89

    public var offset: Int
    public var invertX: Bool
    public var invertY: Bool

    public init(offset: Int = 40, invertX: Bool = false, invertY: Bool = false) {
        precondition(Self.offsetRange.contains(offset), "offset \(offset) outside \(Self.offsetRange)")
        self.offset = offset
        self.invertX = invertX
        self.invertY = invertY
    }

    /// One axis: `Int((position * newRange) / extent + newMin)`, truncated
    /// toward zero, then mirrored (`180 - angle`) when `inverted`.
    public func angle(position: Double, extent: Int, inverted: Bool = false) -> Int {
        let angle = Int(unroundedAngle(position: position, extent: extent))
        return inverted ? 180 - angle : angle
    }

    /// The formula before `Int(...)` truncates it (no mirroring): what a
    /// smoother works on so that it can keep a whole-degree output steady.
    public func unroundedAngle(position: Double, extent: Int) -> Double {
        let newMin = Double(offset)
        let newRange = Double(180 - offset) - newMin
        return (position * newRange) / Double(extent) + newMin
    }

    /// The angles this mapping can produce: `offset ... 180 - offset`.
    public var range: ClosedRange<Int> { offset...(180 - offset) }

    /// Pan and tilt for the centre of `box` in a `width` x `height` frame.
    public func aim(at box: Box, frameWidth width: Int, frameHeight height: Int) -> Aim {
        aim(at: box.center, frameWidth: width, frameHeight: height)
    }

    /// Pan and tilt for a point (pixels) of a `width` x `height` frame.
    public func aim(at point: (x: Double, y: Double), frameWidth width: Int, frameHeight height: Int) -> Aim {
        Aim(
            pan: angle(position: point.x, extent: width, inverted: invertX),
            tilt: angle(position: point.y, extent: height, inverted: invertY))
    }

    /// Where in a `width` x `height` frame `aim` points: the formula undone
    /// (before truncation), within the frame. Without tilt the turret's
    /// height is the frame's middle.
    public func framePoint(of aim: Aim, width: Int, height: Int, tiltEnabled: Bool) -> (x: Double, y: Double) {
        let span = Double(180 - 2 * offset)
        func position(_ angle: Int, inverted: Bool, extent: Int) -> Double {
            let unmirrored = Double(inverted ? 180 - angle : angle)
            return min(max((unmirrored - Double(offset)) / span * Double(extent), 0), Double(extent))
        }
        return (
            position(aim.pan, inverted: invertX, extent: width),
            tiltEnabled ? position(aim.tilt, inverted: invertY, extent: height) : Double(height) / 2
        )
    }
}
