import Foundation
import TestClips
import Testing
import WebSocketFrames

@testable import TurretLinks

#if canImport(Glibc)
    import Glibc
#endif

/// A WebSocket server on loopback that completes the handshake as a relay does,
/// then sends `hostile` to every client, again on every reconnection, and holds
/// the connection until sentry closes it (a peer that never closes).
final class HostileRelay: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let hostile: [UInt8]
    /// More bytes sent after `hostile`, a kilobyte every 10 ms until sentry hangs up (an endless frame).
    private let trickle: Bool
    private(set) var connections = 0
    private var stopped = false

    init(sending hostile: [UInt8], trickle: Bool = false) throws {
        self.hostile = hostile
        self.trickle = trickle
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in serve() }
    }

    private func serve() {
        while !stopped {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            connections += 1
            Thread.detachNewThread { [self] in talk(to: client) }
        }
    }

    private func talk(to client: Int32) {
        defer { close(client) }
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
            let count = read(client, &chunk, chunk.count)
            guard count > 0 else { return }
            request += chunk[..<count]
        }
        let key =
            String(decoding: request, as: UTF8.self).split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("sec-websocket-key:") }.map { $0.dropFirst(18).trimmingCharacters(in: .whitespaces) } ?? ""
        let accept = WebSocketFrames.acceptValue(forKey: key)
        let reply = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
        guard send(Array(reply.utf8) + hostile, to: client) else { return }
        // Held until sentry hangs up (10 s at most): a kilobyte more every 10 ms (a slow
        // sender's endless frame), or waiting for its close.
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        for option in [SO_SNDTIMEO, SO_RCVTIMEO] { setsockopt(client, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size)) }
        let filler = [UInt8](repeating: 0x41, count: 1024)
        if trickle {
            for _ in 0..<1000 where !stopped {
                guard send(filler, to: client) else { return }
                usleep(10_000)
            }
        } else {
            while !stopped, read(client, &chunk, chunk.count) > 0 {}
        }
    }

    private func send(_ bytes: [UInt8], to client: Int32) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    deinit {
        stopped = true
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

@Suite("A hostile or broken relay: sentry closes the connection, says why, reconnects and keeps its frame rate", .serialized)
struct HostileRelayTests {
    /// A server frame's header: FIN + opcode, then a 64-bit length.
    static func header(opcode: UInt8 = 0x82, length: UInt64) -> [UInt8] {
        [0x80 | opcode, 127] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: length >> (8 * UInt64($0))) }
    }

    static let cases: [(String, [UInt8], Bool, String)] = [
        ("the length with its top bit set (the crash)", header(opcode: 0x81, length: 1 << 63), false, "bytes (at most 4096 are taken)"),
        ("a length near 2^63", header(length: UInt64(Int64.max) - 5), false, "bytes (at most 4096 are taken)"),
        ("a 100 MB frame", header(length: 100_000_000), true, "a frame of 100000000 bytes"),
        ("an endless frame of the largest 16-bit length, then more", [0x82, 126, 0xFF, 0xFF], true, "a frame of 65535 bytes"),
        ("garbage after the handshake", Array("GET / HTTP/1.1\r\n\u{1}\u{2}\u{3}".utf8), false, "not a WebSocket frame (first byte 0x47)"),
    ]

    @Test("each hostile stream ends the connection with its reason; the run goes on to the clip's end", arguments: cases)
    func hostile(name: String, bytes: [UInt8], trickle: Bool, reason: String) throws {
        let relay = try HostileRelay(sending: bytes, trickle: trickle)
        // Real time: ten frames a second for three seconds, whatever the relay does.
        let run = try SentryProcess([
            "--camera", Clips.comesAndGoes, "--serial", "ws://127.0.0.1:\(relay.port)", "--realtime", "--frames", "30", "--quiet",
            "--log-level", "info",
        ])
        #expect(run.status == 0, "\(name): \(run.standardError)")
        #expect(run.standardError.contains("connection lost") && run.standardError.contains(reason), "\(name): \(run.standardError)")
        for crash in ["Fatal error", "Illegal instruction", "backtrace", "Range requires"] {
            #expect(!run.standardError.contains(crash), "\(name): \(run.standardError)")
        }
        #expect(relay.connections >= 2, "\(name): it reconnects")
        // The frame rate kept: every frame went through, and the loop's watchdog saw no step over a second.
        #expect(run.standardError.contains("frame loop: 30 frames"), "\(name): \(run.standardError)")
        #expect(!run.standardError.contains("frame loop stalled"), "\(name): \(run.standardError)")
    }
}
