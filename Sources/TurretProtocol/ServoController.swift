/// The bundled firmware's behaviour (SPEC §3–§4) in Swift: the protocol
/// parser, the pan and tilt angles, the scan sweep and the trigger, driven by
/// bytes and by the passage of time. Pure: time is passed in, in seconds.
public struct ServoController: Sendable, Equatable {
    /// Where scan mode sweeps the pan servo.
    public static let scanRange = 20...160
    /// One scan step of 1° every 15 ms.
    public static let scanStepInterval = 0.015
    /// Where the servos start.
    public static let bootAngle = 90

    /// How long the trigger pin stays high for one shot.
    public static let firePulse = 0.1
    /// The firmware never fires twice within this many seconds.
    public static let fireMinimumInterval = 1.0
    /// An aim must have stood unchanged this long before it may be fired at.
    public static let fireSettle = 0.1
    /// Every byte of `F<deg>.` must arrive within this many seconds of the
    /// `F`: a command cut short and finished by later bytes never fires.
    public static let fireWindow = 0.05

    /// Why a fire command was refused.
    public enum FireRefusal: String, Sendable, Equatable {
        /// No `X` since boot or since the last `L`.
        case notAimed = "no aim since boot or the last L"
        case scanning = "sweeping"
        /// The command names another pan angle than the one held.
        case otherAim = "not the aim the servo holds"
        /// The aim changed less than `fireSettle` ago.
        case settling = "the aim is still settling"
        /// Less than `fireMinimumInterval` since the last shot.
        case tooSoon = "too soon after the last shot"
        /// The command's bytes took longer than `fireWindow`.
        case tooSlow = "the command arrived in pieces"
    }

    /// The mechanical limits: no command or sweep leaves them.
    public let limits: ClosedRange<Int>
    public private(set) var pan: Int
    public private(set) var tilt: Int
    public private(set) var isScanning = false
    /// True once an `X` set the pan angle, until the next `L`.
    public private(set) var isAimed = false
    /// When pan or tilt last changed by a command.
    public private(set) var lastAimChange = 0.0
    /// When the last shot started, and how many there were.
    public private(set) var lastShot: Double?
    public private(set) var shots = 0
    /// The last fire command refused, and why (for the simulator's display).
    public private(set) var lastRefusal: FireRefusal?
    private var scanningUp = true
    private var scanStart = 0.0
    private var scanSteps = 0
    private var fireCommandStart = 0.0
    private var parser = CommandParser()

    public init(limits: ClosedRange<Int> = 0...180) {
        precondition(limits.lowerBound >= 0 && limits.upperBound <= 180)
        self.limits = limits
        pan = limits.clamped(Self.bootAngle)
        tilt = limits.clamped(Self.bootAngle)
    }

    /// True while the trigger pin is high at `time`.
    public func isFiring(at time: Double) -> Bool {
        lastShot.map { time >= $0 && time - $0 < Self.firePulse } ?? false
    }

    /// Why `F<angle>.` arriving whole at `time` would be refused, or `nil`
    /// when it would fire.
    public func fireRefusal(_ angle: Int, at time: Double) -> FireRefusal? {
        if isScanning { return .scanning }
        if !isAimed { return .notAimed }
        if angle != pan { return .otherAim }
        if time - lastAimChange < Self.fireSettle { return .settling }
        if let lastShot, time - lastShot < Self.fireMinimumInterval { return .tooSoon }
        return nil
    }

    /// Feeds one received byte at `time`.
    public mutating func receive(_ byte: UInt8, at time: Double) {
        advance(to: time)
        // Any aim byte stops a sweep (an aim change); garbage and `F` do not.
        if byte == UInt8(ascii: "X") || byte == UInt8(ascii: "Y"), isScanning {
            isScanning = false
            lastAimChange = time
        }
        if byte == UInt8(ascii: "F") { fireCommandStart = time }
        switch parser.consume(byte) {
        case .pan(let angle)?:
            pan = aim(from: pan, to: angle, at: time)
            isAimed = true
        case .tilt(let angle)?:
            tilt = aim(from: tilt, to: angle, at: time)
        case .lost?:
            isScanning = true
            isAimed = false
            scanningUp = true
            scanStart = time
            scanSteps = 0
        case .fire(let angle)?:
            lastRefusal = time - fireCommandStart > Self.fireWindow ? .tooSlow : fireRefusal(angle, at: time)
            if lastRefusal == nil {
                lastShot = time
                shots += 1
            }
        case nil:
            break
        }
    }

    /// The new angle for an aim, noting when it changed.
    private mutating func aim(from angle: Int, to value: Int, at time: Double) -> Int {
        let clamped = limits.clamped(value)
        if clamped != angle { lastAimChange = time }
        return clamped
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
