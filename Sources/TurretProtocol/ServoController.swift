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

    /// How long the trigger pin stays high for one shot (the sketch's default
    /// `TRIGGER_PULSE_MS`; a maker may build it longer).
    public static let firePulse = 0.1
    /// The servos' speed the firmware assumes to know when a horn can have
    /// arrived (`SERVO_MS_PER_60_DEGREES`: a loaded MG996R).
    public static let servoSecondsPer60Degrees = 0.2
    /// The bundled firmware stops by itself after this long without a byte
    /// from the host (SPEC §8: at most 10 s).
    public static let bundledLinkTimeout = 5.0
    /// The firmware never fires twice within this many seconds.
    public static let fireMinimumInterval = 1.0
    /// An aim must have stood this long after its horn can have arrived before it may be fired at.
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
        /// The horns cannot have arrived `fireSettle` ago yet.
        case settling = "the aim is still settling"
        /// Less than `fireMinimumInterval` since the last shot.
        case tooSoon = "too soon after the last shot"
        /// The command's bytes took longer than `fireWindow`.
        case tooSlow = "the command arrived in pieces"
    }

    /// The mechanical limits: no command or sweep leaves them.
    public let limits: ClosedRange<Int>
    /// `bundledLinkTimeout` for the bundled sketch, which stops, holds and
    /// forgets its aim when the host goes quiet; `nil` for a board without
    /// one (the original sketch) and for the host's own model, which never
    /// sees the keep-alives.
    public let linkTimeout: Double?
    public private(set) var pan: Int
    public private(set) var tilt: Int
    public private(set) var isScanning = false
    /// True once an `X` set the pan angle, until the next `L` or a link timeout.
    public private(set) var isAimed = false
    /// When each horn can have reached its commanded angle.
    public private(set) var panArrival = 0.0
    public private(set) var tiltArrival = 0.0
    /// A servo gets pulses from the first command for its axis on (no slam at boot).
    public private(set) var isPanDriven = false
    public private(set) var isTiltDriven = false
    /// When the last byte arrived, and whether the link timeout has passed since.
    private var lastByte = 0.0
    private var linkAlive = false
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

    public init(limits: ClosedRange<Int> = 0...180, linkTimeout: Double? = nil) {
        precondition(limits.lowerBound >= 0 && limits.upperBound <= 180)
        self.limits = limits
        self.linkTimeout = linkTimeout
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
        if time - max(panArrival, tiltArrival) < Self.fireSettle { return .settling }
        if let lastShot, time - lastShot < Self.fireMinimumInterval { return .tooSoon }
        return nil
    }

    /// Feeds one received byte at `time`.
    public mutating func receive(_ byte: UInt8, at time: Double) {
        advance(to: time)
        lastByte = time
        linkAlive = true
        // Any aim byte stops a sweep; garbage and `F` do not.
        if byte == UInt8(ascii: "X") || byte == UInt8(ascii: "Y"), isScanning {
            isScanning = false
        }
        if byte == UInt8(ascii: "F") { fireCommandStart = time }
        switch parser.consume(byte) {
        case .pan(let angle)?:
            let before = pan
            pan = limits.clamped(angle)
            panArrival = Self.arrival(after: panArrival, moving: isPanDriven ? abs(pan - before) : 180, at: time)
            isPanDriven = true
            isAimed = true
        case .tilt(let angle)?:
            let before = tilt
            tilt = limits.clamped(angle)
            tiltArrival = Self.arrival(after: tiltArrival, moving: isTiltDriven ? abs(tilt - before) : 180, at: time)
            isTiltDriven = true
        case .lost?:
            isPanDriven = true
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

    /// Feeds a whole command, its bytes received at `time`.
    public mutating func receive(_ command: Command, at time: Double) {
        for byte in command.bytes { receive(byte, at: time) }
    }

    /// When a horn told at `time` to move `degrees` can have arrived: it
    /// heads for the new angle from wherever it is on its way to the old one,
    /// so at most that long after it would have reached the old one. A servo
    /// never driven may stand anywhere: the caller counts 180°.
    static func arrival(after earlier: Double, moving degrees: Int, at time: Double) -> Double {
        max(earlier, time) + Double(degrees) * servoSecondsPer60Degrees / 60
    }

    /// Runs the sweep up to `time`, and the link timeout: the host quiet for
    /// `linkTimeout` stops the sweep where it is and forgets the aim.
    public mutating func advance(to time: Double) {
        if let linkTimeout, linkAlive, time - lastByte >= linkTimeout {
            sweep(to: lastByte + linkTimeout)
            linkAlive = false
            isScanning = false
            isAimed = false
        }
        sweep(to: time)
    }

    /// One degree per step, up to the top of the range, then down to the bottom, and so on.
    private mutating func sweep(to time: Double) {
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
