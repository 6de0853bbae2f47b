import Foundation
import Scratch
import Waiting

/// Debian's Mosquitto, started by a test on a free port of 127.0.0.1 with
/// a password file and an ACL: `sentry` may use `sentry/#` and
/// `homeassistant/#`, `tester` (mosquitto_sub and mosquitto_pub's side)
/// everything. Killed with the test (SIGKILL: the test runner's ignored
/// SIGTERM is inherited).
public final class MosquittoBroker {
    public static let user = "sentry"
    public static let password = "sentry-pass"
    public static let tester = (user: "tester", password: "tester-pass")

    public let port: UInt16
    public let scratch: ScratchDirectory
    private var process: Process?

    public init() throws {
        scratch = try ScratchDirectory("mosquitto")
        port = Self.freePort()
        let passwords = scratch.file("passwd").path
        for (index, (user, password)) in [(Self.user, Self.password), Self.tester].enumerated() {
            let add = Process()
            add.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
            add.arguments = ["-b"] + (index == 0 ? ["-c"] : []) + [passwords, user, password]
            try add.run()
            add.waitUntilExit()
        }
        _ = try scratch.write(
            "user \(Self.user)\ntopic readwrite sentry/#\ntopic readwrite homeassistant/#\nuser \(Self.tester.user)\ntopic readwrite #\n", to: "acl")
        _ = try scratch.write(
            """
            listener \(port) 127.0.0.1
            allow_anonymous false
            password_file \(passwords)
            acl_file \(scratch.file("acl").path)
            persistence false
            user \(NSUserName())
            max_queued_messages 1000

            """, to: "mosquitto.conf")
        try start()
    }

    deinit { kill() }

    public var log: String { (try? String(contentsOf: scratch.file("mosquitto.log"), encoding: .utf8)) ?? "" }

    /// Starts it (again, on the same port) and waits until it listens.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        process.arguments = ["-c", scratch.file("mosquitto.conf").path]
        let log = scratch.file("mosquitto.log")
        if !FileManager.default.fileExists(atPath: log.path) { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        self.process = process
        _ = eventually(within: 10) { [self] in self.log.contains("Opening ipv4 listen socket on port \(port)") && canConnect() || !process.isRunning }
    }

    /// `kill -9`: no clean goodbye to anyone.
    public func kill() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGSTOP or SIGCONT: a broker that stops answering and comes back.
    public func signal(_ number: Int32) {
        if let process { Foundation.kill(process.processIdentifier, number) }
    }

    /// `mosquitto_pub` as the tester.
    public func publish(_ topic: String, _ message: String, retain: Bool = false) {
        _ = run("/usr/bin/mosquitto_pub", ["-t", topic, "-m", message, "-q", "1"] + (retain ? ["-r"] : []))
    }

    /// `mosquitto_sub -v` as the tester: up to `count` messages on `topic` ("TOPIC PAYLOAD" each) within `seconds`.
    /// (Killed by the test, not by its own `-W`: its alarm signal is blocked in a test runner's children.)
    public func messages(on topic: String, count: Int, within seconds: Double = 10) -> [String] {
        run("/usr/bin/mosquitto_sub", ["-t", topic, "-v", "-C", "\(count)"], killedAfter: seconds).split(separator: "\n").map(String.init)
    }

    /// The payload of the first message on `topic` (a retained one at once), as bytes; empty if none came within `seconds`.
    public func payload(on topic: String, within seconds: Double = 10) -> Data {
        var data = runBytes("/usr/bin/mosquitto_sub", ["-t", topic, "-C", "1", "-N"], killedAfter: seconds)
        if data.last == 0x0A { data.removeLast() }
        return data
    }

    /// Starts `mosquitto_sub -v` on `topic` in the background; what it got so far is `received()`.
    public func subscriber(_ topic: String) throws -> Subscriber { try Subscriber(broker: self, topic: topic) }

    public final class Subscriber {
        let process = Process()
        let output: URL

        /// A topic of this subscriber's own: a message on it that comes back proves the subscription is in place.
        let marker = "sentry-tests/marker/\(UUID().uuidString)"

        init(broker: MosquittoBroker, topic: String) throws {
            output = broker.scratch.file("sub-\(UUID().uuidString)")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
            process.arguments = broker.credentials + ["-t", topic, "-t", marker, "-v", "-q", "1"]
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Subscribed once the marker, published after the SUBSCRIBE, comes back (not after a guessed pause).
            let subscribed = eventually(within: 10) { [self] in
                broker.publish(marker, "subscribed")
                return eventually(within: 0.5) { lines().contains { $0.hasPrefix(marker + " ") } }
            }
            if !subscribed { throw MosquittoError("mosquitto_sub on \(topic) never confirmed its subscription") }
        }

        /// The messages on the topic so far, `TOPIC PAYLOAD` each.
        public func received() -> [String] { lines().filter { !$0.hasPrefix(marker + " ") } }

        private func lines() -> [String] {
            ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        deinit {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var credentials: [String] { ["-h", "127.0.0.1", "-p", "\(port)", "-u", Self.tester.user, "-P", Self.tester.password] }

    private func run(_ program: String, _ arguments: [String], killedAfter seconds: Double = 10) -> String {
        String(decoding: runBytes(program, arguments, killedAfter: seconds), as: UTF8.self)
    }

    private func runBytes(_ program: String, _ arguments: [String], killedAfter seconds: Double) -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = credentials + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return Data() }
        let pid = process.processIdentifier
        let deadline = DispatchWorkItem { Foundation.kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: deadline)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        deadline.cancel()
        process.waitUntilExit()
        return data
    }

    private func canConnect() -> Bool {
        let file = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(file) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(file, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A port nothing listens on now: the system's choice for a socket bound to port 0.
    public static func freePort() -> UInt16 {
        let file = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(file) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(file, $0, size) == 0 && getsockname(file, $0, &size) == 0 }
        }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// Why the test broker or a client of it could not do its part.
public struct MosquittoError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
