import Events
import FoundationEssentials
import MonotonicTime
import WebServing

/// Counts a viewer of the video while its connection lives: the stream
/// holds it, and the connection ending drops the stream.
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
struct MJPEGStream: ResponseStream {
    static let boundary = "sentryframe"
    static let contentType = "multipart/x-mixed-replace; boundary=\(boundary)"
    /// With nothing new, the last frame is sent again this often: a viewer
    /// that left is noticed by the failed write.
    static let keepAlive = 2.0

    let hub: ConsoleHub
    let ticket: ViewerTicket
    var sent: JPEGFrame?
    var sentAt = 0.0

    init(hub: ConsoleHub) {
        self.hub = hub
        ticket = ViewerTicket(hub: hub)
    }

    /// The next part; the one before has been written whole by now.
    mutating func next() -> [UInt8]? {
        if let sent { hub.delivered(sent) }
        guard let frame = nextFrame() else { return nil }
        sent = frame
        sentAt = monotonicSeconds()
        return Self.part(for: frame)
    }

    /// The newest frame not sent yet, or the last one again after
    /// `keepAlive` seconds; `nil` once sentry stops.
    mutating func nextFrame() -> JPEGFrame? {
        while !hub.isClosed {
            let version = hub.version
            if let jpeg = hub.jpeg, jpeg.frame != sent?.frame || sent == nil || monotonicSeconds() - sentAt >= Self.keepAlive {
                return jpeg
            }
            hub.waitForChange(after: version)
        }
        return nil
    }

    static func part(for frame: JPEGFrame) -> [UInt8] {
        let header =
            "--\(boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.bytes.count)\r\n"
            + "X-Frame-Index: \(frame.frame)\r\nX-Frame-Time: \(frame.time)\r\n\r\n"
        return Array(header.utf8) + frame.bytes + Array("\r\n".utf8)
    }
}

/// `GET /api/events`: Server-Sent Events. `frame` events carry each frame's
/// status (the newest: a slow reader skips frames), `log` events the event
/// log's lines, starting with the ones kept so far, `event` events the
/// record of each event `--events` kept since the stream began.
struct EventStream: ResponseStream {
    /// A comment line this often keeps proxies and the browser patient.
    static let keepAlive = 10.0

    let hub: ConsoleHub
    var started = false
    var lastEvent = 0
    var lastFrame: Int?
    var keptSeen: Int
    var lastSent = monotonicSeconds()
    let encoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return encoder
    }()

    init(hub: ConsoleHub) {
        self.hub = hub
        // Start with the recent past of the log.
        lastEvent = Swift.max(0, hub.newestEvent - 50)
        // The events before are the history's to show.
        keptSeen = hub.kept(after: .max).count
    }

    mutating func next() -> [UInt8]? {
        if !started {
            started = true
            return Array("retry: 1000\n\n".utf8)
        }
        while !hub.isClosed {
            let version = hub.version
            let news = news()
            if !news.isEmpty || monotonicSeconds() - lastSent >= Self.keepAlive {
                lastSent = monotonicSeconds()
                return news.isEmpty ? Array(": keep-alive\n\n".utf8) : news
            }
            hub.waitForChange(after: version)
        }
        return nil
    }

    /// New log lines and the newest frame status, as SSE text.
    mutating func news() -> [UInt8] {
        var text = ""
        for event in hub.events(after: lastEvent) {
            text += "event: log\ndata: \(json(event))\n\n"
            lastEvent = event.sequence
        }
        let (records, count) = hub.kept(after: keptSeen)
        for record in records { text += "event: event\ndata: \(json(record))\n\n" }
        keptSeen = count
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
