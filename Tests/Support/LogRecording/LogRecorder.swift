import Logging
import Synchronization

/// Keeps every log message, to check what a user would read.
public final class LogRecorder: Sendable {
    public let messages = Mutex<[String]>([])

    public init() {}

    public var logger: Logger {
        Logger(label: "test") { _ in Handler(recorder: self) }
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            recorder.messages.withLock { $0.append("\(event.level): \(event.message)") }
        }
    }
}
