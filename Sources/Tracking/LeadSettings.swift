#if canImport(Glibc)
    import Glibc
#endif

/// What leading a moving target needs to know of the blaster and of faces
/// (`--trigger-delay`, `--muzzle-speed`, `--face-width`, `--range`):
/// how long a shot takes to arrive, from the fire command to the dart
/// meeting a target at a given distance.
public struct LeadSettings: Sendable, Equatable {
    /// Seconds from `F` reaching the turret to the dart leaving.
    public var triggerDelay: Double
    /// Metres per second the dart leaves at.
    public var muzzleSpeed: Double
    /// Metres across the detector's box on an adult's face.
    public var faceWidth: Double
    /// Metres to every target, instead of the distance from the face's size.
    public var fixedRange: Double?

    /// A foam-dart blaster with a solenoid trigger: 0.1 s to leave, 15 m/s.
    public static let typical = LeadSettings(triggerDelay: 0.1, muzzleSpeed: 15, faceWidth: 0.15, fixedRange: nil)

    public init(triggerDelay: Double, muzzleSpeed: Double, faceWidth: Double, fixedRange: Double?) {
        precondition(triggerDelay >= 0 && muzzleSpeed > 0 && faceWidth > 0 && (fixedRange ?? 1) > 0)
        self.triggerDelay = triggerDelay
        self.muzzleSpeed = muzzleSpeed
        self.faceWidth = faceWidth
        self.fixedRange = fixedRange
    }

    /// Metres to a face whose box spans `degrees` of the camera's view.
    public func range(faceSpanningDegrees degrees: Double) -> Double {
        fixedRange ?? faceWidth / (2 * tan(max(degrees, 0.1) * .pi / 360))
    }

    /// Seconds from `F` reaching the turret to the dart reaching a target `range` metres away.
    public func arrivalDelay(range: Double) -> Double { triggerDelay + range / muzzleSpeed }
}
