import Foundation
import MonotonicTime
import Serial
import TurretProtocol

/// `sentry` running against a serial path, read from the pty's other side.
final class RunningSentry {
    let process = Process()

    /// Runs sentry with `arguments`; with `confinedTo`, on that CPU alone (through taskset);
    /// with `output`, its stdout and stderr go to that file.
    init(_ arguments: [String], confinedTo cpu: Int? = nil, output: URL? = nil) throws {
        if let cpu {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            process.arguments = ["--cpu-list", "\(cpu)", SentryProcess.executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: SentryProcess.executable)
            process.arguments = arguments
        }
        if let output {
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let file = try FileHandle(forWritingTo: output)
            process.standardOutput = file
            process.standardError = file
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
    }

    /// SIGTERM, then the exit status.
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { _ = stop() }
}

/// Reads from the pty until `done` says enough, or `timeout` passes.
func collect(_ pty: PseudoTerminal, timeout: Double, until done: ([UInt8]) -> Bool) -> [UInt8] {
    var bytes: [UInt8] = []
    let deadline = monotonicSeconds() + timeout
    while !done(bytes), monotonicSeconds() < deadline { bytes += pty.read(timeout: 0.05) }
    return bytes
}

/// True when `bytes` are whole protocol commands and nothing else.
func isPureProtocol(_ bytes: [UInt8]) -> Bool {
    Command.decode(bytes).flatMap(\.bytes) == bytes
}
