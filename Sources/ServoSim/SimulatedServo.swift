import Dispatch
import FoundationEssentials
import MonotonicTime
import Serial
import Synchronization
import Threading
import Turret
import TurretProtocol

/// A servo turret on a pseudo-terminal: a program that opens `devicePath`
/// talks to the firmware's state machine exactly as it would to the real
/// firmware, and the servos take a real servo's time to get where they are
/// told (`TurretModel`). A background thread reads the bytes and records the
/// angles over time.
///
/// Time is the wall clock since start, or, with `frameClock`, whatever the
/// caller last passed to `advance(to:)`: a virtual camera rendering frame
/// by frame then sees the servo move on the frames' own clock, however fast
/// the frames are processed.
public final class SimulatedServo: Sendable {
    /// The servo state at one moment.
    public struct Sample: Sendable, Equatable {
        /// Seconds since the simulator started (or on the frame clock).
        public var time: Double
        /// The angles the firmware has commanded.
        public var pan: Int
        public var tilt: Int
        public var isScanning: Bool
        /// Where the horns physically point (they lag behind commands).
        public var panPosition: Double
        public var tiltPosition: Double
        /// Shots fired so far, and whether the trigger is high now.
        public var shots: Int
        public var isFiring: Bool
    }

    /// What it heard in all: every byte, and the commands they made.
    public struct Tally: Sendable, Equatable {
        public var bytes = 0
        public var commands = 0
        /// Of them, `L`.
        public var lost = 0

        public init() {}
    }

    /// The newest bytes and samples kept (tests and the end-of-run report read
    /// them): the demo left running over a weekend stays the size it had after
    /// an hour or two; older ones are only counted (`tally`).
    public static let keptBytes = 1 << 20
    public static let keptSamples = 20_000

    private struct State {
        var turret: TurretModel
        var received = RecentHistory<UInt8>(capacity: SimulatedServo.keptBytes)
        var track = RecentHistory<Sample>(capacity: SimulatedServo.keptSamples)
        var parser = CommandParser()
        var tally = Tally()
        var running = true
        /// The frame clock's time, or `nil` for the wall clock.
        var frameTime: Double?

        func sample(at time: Double) -> Sample {
            let c = turret.controller
            return Sample(
                time: time, pan: c.pan, tilt: c.tilt, isScanning: c.isScanning,
                panPosition: turret.pan, tiltPosition: turret.tilt, shots: c.shots, isFiring: c.isFiring(at: time))
        }

        /// Appends a sample when the servo state changed.
        mutating func record(at time: Double) {
            var sample = sample(at: time)
            if let last = track.last {
                sample.time = last.time
                if last == sample { return }
                sample.time = time
            }
            track.append(sample)
        }
    }

    /// The path a serial client opens, e.g. `/dev/pts/3`.
    public let devicePath: String
    private let terminal: Mutex<PseudoTerminal?>
    private let state: Mutex<State>
    private let start = monotonicSeconds()
    /// Signalled by the reader thread as it ends.
    private let readerEnded = DispatchSemaphore(value: 0)
    /// Broadcast whenever bytes arrive, for `waitForBytes`.
    private let arrived = Condition()

    /// Creates the pty and starts listening on it. `secondsPer60Degrees` is
    /// the servos' speed (0: they jump); `frameClock` see above.
    public init(
        limits: ClosedRange<Int> = 0...180, secondsPer60Degrees: Double = ServoMotion.typicalSecondsPer60Degrees,
        frameClock: Bool = false
    ) throws(SerialError) {
        let pty = try PseudoTerminal()
        devicePath = pty.devicePath
        terminal = Mutex(pty)
        var initial = State(turret: TurretModel(limits: limits, secondsPer60Degrees: secondsPer60Degrees), frameTime: frameClock ? 0 : nil)
        initial.record(at: 0)
        state = Mutex(initial)
        startThread(named: "servo-sim") { [self] in run() }
    }

    deinit { stop() }

    /// The bytes received, the newest `keptBytes` of them (all of a short run's).
    public var receivedBytes: [UInt8] { state.withLock { $0.received.elements } }

    /// The angles over time, a sample at each change: the newest `keptSamples`.
    public var track: [Sample] { state.withLock { $0.track.elements } }

    /// Everything received, counted.
    public var tally: Tally { state.withLock { $0.tally } }

    /// When each shot in `track` was taken, oldest first, from its shot number `after + 1` on.
    public static func shotTimes(in track: [Sample], after count: Int = 0) -> [Double] {
        zip(track, track.dropFirst()).filter { $1.shots > $0.shots && $1.shots > count }.map(\.1.time)
    }

    /// Where the horns pointed at `time` in `track`: its samples, joined by straight lines.
    public static func horns(at time: Double, in track: [Sample]) -> (pan: Double, tilt: Double) {
        guard let after = track.firstIndex(where: { $0.time > time }) else { return (track.last?.panPosition ?? 90, track.last?.tiltPosition ?? 90) }
        guard after > 0 else { return (track[0].panPosition, track[0].tiltPosition) }
        let a = track[after - 1], b = track[after]
        let share = (time - a.time) / (b.time - a.time)
        return (a.panPosition + (b.panPosition - a.panPosition) * share, a.tiltPosition + (b.tiltPosition - a.tiltPosition) * share)
    }

    /// The state now.
    public var current: Sample {
        let wall = monotonicSeconds() - start
        return state.withLock { state in
            let now = state.frameTime ?? wall
            state.turret.advance(to: now)
            state.record(at: now)
            return state.sample(at: now)
        }
    }

    /// Moves the frame clock to `time` (a simulator made with `frameClock`)
    /// and returns the state then.
    @discardableResult
    public func advance(to time: Double) -> Sample {
        state.withLock { state in
            precondition(state.frameTime != nil, "advance(to:) needs a simulator on the frame clock")
            state.frameTime = max(state.frameTime ?? 0, time)
        }
        return current
    }

    /// Waits until `count` bytes have arrived or `timeout` seconds pass.
    @discardableResult
    public func waitForBytes(_ count: Int, timeout: Double) -> Bool {
        arrived.wait(seconds: timeout) { self.tally.bytes >= count }
    }

    /// Stops the reader thread and closes the pty. Idempotent.
    public func stop() {
        let wasRunning = state.withLock { state in
            defer { state.running = false }
            return state.running
        }
        // Wait for the reader to notice (within its 5 ms read) before closing its descriptors.
        if wasRunning { readerEnded.wait() }
        terminal.withLock {
            $0?.close(); $0 = nil
        }
    }

    private func run() {
        defer { readerEnded.signal() }
        while state.withLock({ $0.running }) {
            let bytes = terminal.withLock { $0?.read(timeout: 0.005) } ?? []
            let wall = monotonicSeconds() - start
            state.withLock { state in
                let now = state.frameTime ?? wall
                for byte in bytes {
                    state.turret.receive(byte, at: now)
                    state.received.append(byte)
                    state.tally.bytes += 1
                    if let command = state.parser.consume(byte) {
                        state.tally.commands += 1
                        if command == .lost { state.tally.lost += 1 }
                    }
                    state.record(at: now)
                }
                state.turret.advance(to: now)
                state.record(at: now)
            }
            if !bytes.isEmpty { arrived.withLock { arrived.broadcast() } }
        }
    }
}
