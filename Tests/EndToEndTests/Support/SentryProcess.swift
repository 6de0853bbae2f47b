import Dispatch
import Foundation
import SentryBinary

/// A finished run of the `sentry` binary (or another program): its status
/// and what it printed. Both pipes are read at once, so a child that fills
/// one (64 KiB of log on stderr) while the other is being read never blocks.
struct SentryProcess {
    static let executable = SentryBinary.path

    var status: Int32
    var standardOutput: String { String(decoding: outputBytes, as: UTF8.self) }
    /// What it printed, as bytes (raw pictures).
    var outputBytes: Data
    var standardError: String

    init(_ arguments: [String], environment: [String: String]? = nil) throws {
        try self.init(program: Self.executable, arguments, environment: environment)
    }

    /// `environment`: added to this process's own.
    init(program: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errors = ReadToEnd(err.fileHandleForReading)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = errors.wait()
        process.waitUntilExit()
        status = process.terminationStatus
        outputBytes = outData
        standardError = String(decoding: errData, as: UTF8.self)
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class ReadToEnd: @unchecked Sendable {
    // Written by the reading thread before `done` is signalled, read after `wait()`.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
