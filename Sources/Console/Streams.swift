import FlyingSocks
import Foundation
import MonotonicTime

/// Counts a viewer of the video while its connection lives: the stream's
/// iterator holds it, and the connection ending drops the iterator.
final class ViewerTicket: Sendable {
    private let hub: ConsoleHub

    init(hub: ConsoleHub) {
        self.hub = hub
        hub.viewerJoined()
    }

    deinit { hub.viewerLeft() }
}

/// `GET /stream.mjpg`: `multipart/x-mixed-replace` JPEG parts, each the
/// newest frame encoded (a viewer that falls behind skips frames), with its
/// frame index in an `X-Frame-Index` header so the page can match overlays.
struct MJPEGBody: AsyncBufferedSequence {
    typealias Element = UInt8
    static let boundary = "sentryframe"
    static let contentType = "multipart/x-mixed-replace; boundary=\(boundary)"
    /// With nothing new, the last frame is sent again this often: a viewer
    /// that left is noticed by the failed write.
    static let keepAlive = 2.0

    let hub: ConsoleHub

    func makeAsyncIterator() -> Iterator { Iterator(hub: hub) }

    struct Iterator: AsyncBufferedIteratorProtocol {
        let hub: ConsoleHub
        var ticket: ViewerTicket?
        var part: [UInt8] = []
        var offset = 0
        var sent: JPEGFrame?
        var sentAt = 0.0

        init(hub: ConsoleHub) { self.hub = hub }

        mutating func next() async throws -> UInt8? {
            try await nextBuffer(suggested: 1)?.first
        }

        mutating func nextBuffer(suggested count: Int) async throws -> ArraySlice<UInt8>? {
            if ticket == nil { ticket = ViewerTicket(hub: hub) }
            if offset >= part.count {
                // The whole previous part has been written.
                if let sent, !part.isEmpty { hub.delivered(sent) }
                guard let frame = await nextFrame() else { return nil }
                part = Self.part(for: frame)
                offset = 0
                sent = frame
                sentAt = monotonicSeconds()
            }
            let end = Swift.min(part.count, offset + Swift.max(count, 1))
            defer { offset = end }
            return part[offset..<end]
        }

        /// The newest frame not sent yet, or the last one again after
        /// `keepAlive` seconds; `nil` once sentry stops.
        mutating func nextFrame() async -> JPEGFrame? {
            while !hub.isClosed && !Task.isCancelled {
                let version = hub.version
                if let jpeg = hub.jpeg, jpeg.frame != sent?.frame || sent == nil || monotonicSeconds() - sentAt >= MJPEGBody.keepAlive {
                    return jpeg
                }
                await hub.waitForChange(after: version)
            }
            return nil
        }

        static func part(for frame: JPEGFrame) -> [UInt8] {
            let header =
                "--\(MJPEGBody.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.bytes.count)\r\n"
                + "X-Frame-Index: \(frame.frame)\r\nX-Frame-Time: \(frame.time)\r\n\r\n"
            return Array(header.utf8) + frame.bytes + Array("\r\n".utf8)
        }
    }
}

/// `GET /api/events`: Server-Sent Events. `frame` events carry each frame's
/// status (the newest: a slow reader skips frames), `log` events the event
/// log's lines, starting with the ones kept so far.
struct EventStreamBody: AsyncBufferedSequence {
    typealias Element = UInt8
    /// A comment line this often keeps proxies and the browser patient.
    static let keepAlive = 10.0

    let hub: ConsoleHub

    func makeAsyncIterator() -> Iterator { Iterator(hub: hub) }

    struct Iterator: AsyncBufferedIteratorProtocol {
        let hub: ConsoleHub
        var pending: [UInt8] = Array("retry: 1000\n\n".utf8)
        var offset = 0
        var lastEvent = 0
        var lastFrame: Int?
        var lastSent = monotonicSeconds()
        let encoder = JSONEncoder()

        init(hub: ConsoleHub) {
            self.hub = hub
            // Start with the recent past of the log.
            lastEvent = Swift.max(0, hub.newestEvent - 50)
        }

        mutating func next() async throws -> UInt8? {
            try await nextBuffer(suggested: 1)?.first
        }

        mutating func nextBuffer(suggested count: Int) async throws -> ArraySlice<UInt8>? {
            while offset >= pending.count {
                if hub.isClosed || Task.isCancelled { return nil }
                let version = hub.version
                pending = news()
                offset = 0
                if pending.isEmpty {
                    if monotonicSeconds() - lastSent >= EventStreamBody.keepAlive {
                        pending = Array(": keep-alive\n\n".utf8)
                    } else {
                        await hub.waitForChange(after: version)
                    }
                }
            }
            lastSent = monotonicSeconds()
            let end = Swift.min(pending.count, offset + Swift.max(count, 1))
            defer { offset = end }
            return pending[offset..<end]
        }

        /// New log lines and the newest frame status, as SSE text.
        mutating func news() -> [UInt8] {
            var text = ""
            for event in hub.events(after: lastEvent) {
                text += "event: log\ndata: \(json(event))\n\n"
                lastEvent = event.sequence
            }
            if let status = hub.status, status.frame != lastFrame || lastFrame == nil {
                text += "event: frame\ndata: \(json(status))\n\n"
                lastFrame = status.frame
            }
            return Array(text.utf8)
        }

        func json(_ value: some Encodable) -> String {
            (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
    }
}
