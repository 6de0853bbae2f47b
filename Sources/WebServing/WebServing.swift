import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

/// `[HOST:]PORT` for a server sentry runs (the relay, the web console):
/// an IPv4 host, 127.0.0.1 unless given.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    /// Parses `text`; `nil` unless it is `PORT` or `IPV4:PORT` with a port of 1 to 65535.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let portText = parts.last, let port = UInt16(portText), port > 0 else { return nil }
        let host = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard octets.count == 4 else { return nil }
        self.host = host
        self.port = port
    }

    /// Only this machine can reach it.
    public var isLoopback: Bool { host.hasPrefix("127.") }

    public var description: String { "\(host):\(port)" }
}

/// The shared secret of a server reachable from the network: every request
/// carries it as `?token=` or `Authorization: Bearer`.
public struct AccessToken: Sendable {
    public let value: String?

    public init(_ value: String?) { self.value = value }

    /// True when `request` carries the token (or none is needed).
    public func admits(_ request: HTTPRequest) -> Bool {
        guard let value else { return true }
        if request.query.contains(where: { $0.name == "token" && $0.value == value }) { return true }
        return request.headers[.authorization] == "Bearer \(value)"
    }
}

/// Why a server could not start, in one line.
public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension HTTPServer {
    /// Starts serving in the background and returns once the socket
    /// listens; throws when it cannot (a port in use).
    nonisolated public func startInBackground() throws(ServerError) {
        // nil until known; then nil inside for listening, or why not.
        final class Outcome: Sendable { let value = Mutex<String??>(nil) }
        let box = Outcome()
        Task {
            do {
                try await self.run()
            } catch {
                box.value.withLock { if $0 == nil { $0 = .some("\(error)") } }
            }
        }
        Task {
            do {
                try await self.waitUntilListening(timeout: 5)
                box.value.withLock { if $0 == nil { $0 = .some(nil) } }
            } catch {
                box.value.withLock { if $0 == nil { $0 = .some("did not start listening: \(error)") } }
            }
        }
        while true {
            if let result = box.value.withLock({ $0 }) {
                if let failure = result { throw ServerError(failure) }
                return
            }
            usleep(2000)
        }
    }

    /// Stops listening and closes every connection, waiting at most `timeout` seconds.
    nonisolated public func stopAndWait(timeout: TimeInterval = 1) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await self.stop(timeout: timeout)
            done.signal()
        }
        done.wait()
    }
}
