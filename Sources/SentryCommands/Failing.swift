import ArgumentParser
import FoundationEssentials
import Logging
import TextOutput

/// Our errors already say what and how to fix: print them as one line, exit 1.
func failingCleanly<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CustomStringConvertible & Error {
        StandardStream.writeError("sentry: \(error.description)\n")
        throw ExitCode.failure
    }
}

func makeLogger(level: String) -> Logger {
    LoggingSystem.bootstrap { label in
        var handler = OneLineLogHandler(StreamLogHandler.standardError(label: label))
        handler.logLevel = Logger.Level(rawValue: level) ?? .warning
        return handler
    }
    return Logger(label: "sentry")
}

/// Every message one line of sentry's: what a message quotes (a client's path, a hook's
/// output, a broker's topic) cannot start a line of its own or drive the terminal.
struct OneLineLogHandler<Wrapped: LogHandler>: LogHandler {
    var wrapped: Wrapped

    init(_ wrapped: Wrapped) { self.wrapped = wrapped }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(event.message.description.oneLine)"
        wrapped.log(event: event)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }
}
