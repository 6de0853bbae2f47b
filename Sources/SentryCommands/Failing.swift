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
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = Logger.Level(rawValue: level) ?? .warning
        return handler
    }
    return Logger(label: "sentry")
}
