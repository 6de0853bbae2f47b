import SentryCore

/// The bundled firmware's behaviour (SPEC §3–§4) in Swift: the protocol
/// parser, the pan and tilt angles and the scan sweep, driven by bytes and
/// by the passage of time. Pure: time is passed in, in seconds.
public struct ServoController: Sendable, Equatable {
    /// Where scan mode sweeps the pan servo.
    public static let scanRange = 20...160
    /// One scan step of 1° every 15 ms.
    public static let scanStepInterval = 0.015
    /// Where the servos start.
    public static let bootAngle = 90

    /// The mechanical limits: no command or sweep leaves them.
    public let limits: ClosedRange<Int>
    public private(set) var pan: Int
    public private(set) var tilt: Int
    public private(set) var isScanning = false
    private var scanningUp = true
    private var scanStart = 0.0
    private var scanSteps = 0
    private var parser = CommandParser()

    public init(limits: ClosedRange<Int> = 0...180) {
        precondition(limits.lowerBound >= 0 && limits.upperBound <= 180)
        self.limits = limits
        pan = limits.clamped(Self.bootAngle)
        tilt = limits.clamped(Self.bootAngle)
    }

    /// Feeds one received byte at `time`.
    public mutating func receive(_ byte: UInt8, at time: Double) {
        advance(to: time)
        // Any command byte stops a sweep; garbage does not.
        if byte == UInt8(ascii: "X") || byte == UInt8(ascii: "Y") { isScanning = false }
        switch parser.consume(byte) {
        case .pan(let angle)?:
            pan = limits.clamped(angle)
        case .tilt(let angle)?:
            tilt = limits.clamped(angle)
        case .lost?:
            isScanning = true
            scanningUp = true
            scanStart = time
            scanSteps = 0
        case nil:
            break
        }
    }

    /// Runs the sweep up to `time`: one degree per step, up to the top of the
    /// range, then down to the bottom, and so on.
    public mutating func advance(to time: Double) {
        guard isScanning else { return }
        let low = max(Self.scanRange.lowerBound, limits.lowerBound)
        let high = min(Self.scanRange.upperBound, limits.upperBound)
        // Steps are counted from the start of the sweep, so rounding never drifts.
        let due = Int(((time - scanStart) / Self.scanStepInterval + 1e-9).rounded(.down))
        while scanSteps < due {
            scanSteps += 1
            if scanningUp && pan >= high { scanningUp = false }
            if !scanningUp && pan <= low { scanningUp = true }
            pan += scanningUp ? 1 : -1
        }
    }
}

extension ClosedRange where Bound == Int {
    func clamped(_ value: Int) -> Int { Swift.min(Swift.max(value, lowerBound), upperBound) }
}
