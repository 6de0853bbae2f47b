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
/// Given the camera's field of view, the frame spans that many degrees
/// around 90 instead (a 60° webcam: 60...120, where offset 40 is a 100°
/// fish-eye's), the same degrees per pixel on both axes, so tilt spans the
/// picture's aspect of it; `offset ... 180 - offset` stays the limit.
public struct AngleMapper: Hashable, Sendable {
    /// The valid range of `offset`: it must leave a non-empty output range.
    public static let offsetRange = 0...89

    public var offset: Int
    public var invertX: Bool
    public var invertY: Bool
    /// Degrees the frame's width spans (`--fov` on a fixed mount); nil: SPEC §2's offset range.
    public var fieldOfView: Double?

    public init(offset: Int = 40, invertX: Bool = false, invertY: Bool = false, fieldOfView: Double? = nil) {
        precondition(Self.offsetRange.contains(offset), "offset \(offset) outside \(Self.offsetRange)")
        self.offset = offset
        self.invertX = invertX
        self.invertY = invertY
        self.fieldOfView = fieldOfView
    }

    /// One axis: `Int((position * newRange) / extent + newMin)`, truncated
    /// toward zero, then mirrored (`180 - angle`) when `inverted`. `frameWidth`:
    /// the frame's width, which sets the degrees per pixel of a field of view.
    public func angle(position: Double, extent: Int, frameWidth: Int, inverted: Bool = false) -> Int {
        let angle = Int(unroundedAngle(position: position, extent: extent, frameWidth: frameWidth))
        return inverted ? 180 - angle : angle
    }

    /// The formula before `Int(...)` truncates it (no mirroring): what a
    /// smoother works on so that it can keep a whole-degree output steady.
    public func unroundedAngle(position: Double, extent: Int, frameWidth: Int) -> Double {
        guard let fieldOfView else {
            let newMin = Double(offset)
            let newRange = Double(180 - offset) - newMin
            return (position * newRange) / Double(extent) + newMin
        }
        let angle = 90 + (position - Double(extent) / 2) * fieldOfView / Double(frameWidth)
        return min(max(angle, Double(offset)), Double(180 - offset))
    }

    /// Both axes' formula before truncation (no mirroring) for a point of a
    /// `width` x `height` frame: tilt at the degrees per pixel the width sets.
    public func unroundedAngles(at point: (x: Double, y: Double), frameWidth width: Int, frameHeight height: Int) -> (pan: Double, tilt: Double) {
        (unroundedAngle(position: point.x, extent: width, frameWidth: width), unroundedAngle(position: point.y, extent: height, frameWidth: width))
    }

    /// Degrees one pixel spans in a frame `frameWidth` wide (the same on both axes with `--fov`).
    public func degreesPerPixel(frameWidth: Int) -> Double {
        (fieldOfView ?? Double(180 - 2 * offset)) / Double(frameWidth)
    }

    /// Both axes' formula before truncation, mirrored as `invertX`/`invertY`
    /// say: the unrounded angles the wire would carry for the point.
    public func unroundedWireAngles(at point: (x: Double, y: Double), frameWidth width: Int, frameHeight height: Int) -> (pan: Double, tilt: Double) {
        let (pan, tilt) = unroundedAngles(at: point, frameWidth: width, frameHeight: height)
        return (invertX ? 180 - pan : pan, invertY ? 180 - tilt : tilt)
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
            pan: angle(position: point.x, extent: width, frameWidth: width, inverted: invertX),
            tilt: angle(position: point.y, extent: height, frameWidth: width, inverted: invertY))
    }

    /// Where in a `width` x `height` frame `aim` points: the formula undone
    /// (before truncation), within the frame. Without tilt the turret's
    /// height is the frame's middle.
    public func framePoint(of aim: Aim, width: Int, height: Int, tiltEnabled: Bool) -> (x: Double, y: Double) {
        let span = Double(180 - 2 * offset)
        func position(_ angle: Int, inverted: Bool, extent: Int) -> Double {
            let unmirrored = Double(inverted ? 180 - angle : angle)
            let position =
                if let fieldOfView { Double(extent) / 2 + (unmirrored - 90) * Double(width) / fieldOfView } else {
                    (unmirrored - Double(offset)) / span * Double(extent)
                }
            return min(max(position, 0), Double(extent))
        }
        return (
            position(aim.pan, inverted: invertX, extent: width),
            tiltEnabled ? position(aim.tilt, inverted: invertY, extent: height) : Double(height) / 2
        )
    }
}
