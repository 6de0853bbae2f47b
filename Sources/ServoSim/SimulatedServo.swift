import Foundation
import SentryCore
import Serial
import Synchronization

/// A servo turret on a pseudo-terminal: a program that opens `devicePath`
/// talks to a `ServoController` exactly as it would to the real firmware.
/// A background thread reads the bytes and records the angles over time.
public final class SimulatedServo: Sendable {
    /// The servo state at one moment.
    public struct Sample: Sendable, Equatable {
        /// Seconds since the simulator started.
        public var time: Double
        public var pan: Int
        public var tilt: Int
        public var isScanning: Bool
    }

    private struct State {
        var controller: ServoController
        var received: [UInt8] = []
        var track: [Sample] = []
        var running = true

        /// Appends a sample when the servo state changed.
        mutating func record(at time: Double) {
            let sample = Sample(time: time, pan: controller.pan, tilt: controller.tilt, isScanning: controller.isScanning)
            if let last = track.last, (last.pan, last.tilt, last.isScanning) == (sample.pan, sample.tilt, sample.isScanning) { return }
            track.append(sample)
        }
    }

    /// The path a serial client opens, e.g. `/dev/pts/3`.
    public let devicePath: String
    private let terminal: Mutex<PseudoTerminal?>
    private let state: Mutex<State>
    private let start = monotonicSeconds()
    private let stopped = Mutex(false)

    /// Creates the pty and starts listening on it.
    public init(limits: ClosedRange<Int> = 0...180) throws(SerialError) {
        let pty = try PseudoTerminal()
        devicePath = pty.devicePath
        let controller = ServoController(limits: limits)
        terminal = Mutex(pty)
        state = Mutex(State(controller: controller, track: [Sample(time: 0, pan: controller.pan, tilt: controller.tilt, isScanning: false)]))
        let thread = Thread { [self] in run() }
        thread.name = "servo-sim"
        thread.start()
    }

    deinit { stop() }

    /// Every byte received so far.
    public var receivedBytes: [UInt8] { state.withLock { $0.received } }

    /// The angles over time: a sample at each change.
    public var track: [Sample] { state.withLock { $0.track } }

    /// The state now.
    public var current: Sample {
        let now = monotonicSeconds() - start
        return state.withLock { state in
            state.controller.advance(to: now)
            return Sample(time: now, pan: state.controller.pan, tilt: state.controller.tilt, isScanning: state.controller.isScanning)
        }
    }

    /// Waits until `count` bytes have arrived or `timeout` seconds pass.
    @discardableResult
    public func waitForBytes(_ count: Int, timeout: Double) -> Bool {
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            if receivedBytes.count >= count { return true }
            usleep(2000)
        }
        return receivedBytes.count >= count
    }

    /// Stops the reader thread and closes the pty. Idempotent.
    public func stop() {
        state.withLock { $0.running = false }
        // Wait for the reader to notice before closing its descriptors.
        while !stopped.withLock({ $0 }) { usleep(1000) }
        terminal.withLock { $0?.close(); $0 = nil }
    }

    private func run() {
        defer { stopped.withLock { $0 = true } }
        while state.withLock({ $0.running }) {
            let bytes = terminal.withLock { $0?.read(timeout: 0.005) } ?? []
            let now = monotonicSeconds() - start
            state.withLock { state in
                for byte in bytes {
                    state.controller.receive(byte, at: now)
                    state.received.append(byte)
                    state.record(at: now)
                }
                state.controller.advance(to: now)
                state.record(at: now)
            }
        }
    }
}
