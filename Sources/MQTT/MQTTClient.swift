import Logging
import MonotonicTime
import Synchronization
import Threading

/// Where the broker is and who connects to it.
public struct MQTTClientOptions: Sendable {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: [UInt8]?
    public var clientID: String
    /// Seconds between packets at most; a PINGREQ fills a quiet spell, and a
    /// broker that does not answer one within half of it is given up on.
    public var keepAlive: UInt16 = 30
    /// Published by the broker for us should we vanish (a retained `offline`).
    public var will: MQTTMessage?
    /// Published before a clean DISCONNECT, when the will is not (the same `offline`).
    public var farewell: [MQTTMessage] = []
    /// Topic filters to subscribe to, at QoS 1.
    public var subscriptions: [String] = []
    /// QoS 1 messages kept while the broker is away; past it the oldest go (and the log says so).
    public var queueLimit = 100
    /// Seconds to reach the broker, and again for its CONNACK, before the attempt is given up.
    public var connectTimeout = 10.0
    /// Seconds events wait, on each connection, after its first messages went out: whoever
    /// subscribes on reading them (Home Assistant, on a discovery config) is listening by then.
    public var eventsAfterAnnouncing = 0.0

    public init(host: String, port: Int, clientID: String) {
        (self.host, self.port, self.clientID) = (host, port, clientID)
    }
}

/// An MQTT 3.1.1 client on a thread of its own. Callers never wait on the
/// broker: `publish` hands a message over and returns. QoS 0 messages are
/// states (per topic the newest wins, and the newest is sent again on
/// every new connection); QoS 1 messages are events (queued, bounded, sent
/// again until acknowledged, across reconnections). A connection that fails
/// is tried again after 1, 2, 4 … 30 s, each reason logged once (and again
/// a minute later if it holds).
public final class MQTTClient: Sendable {
    /// What the client has done so far.
    public struct Figures: Sendable, Equatable {
        public var connections = 0
        public var published = 0
        public var received = 0
        /// QoS 1 messages dropped from a full queue.
        public var dropped = 0
        /// QoS 1 messages handed over, and acknowledged by the broker.
        public var queued = 0
        public var acknowledged = 0
        public var connected = false
    }

    private struct Outbox {
        /// QoS 0, by topic, in the order first published.
        var states: [String: MQTTMessage] = [:]
        var stateOrder: [String] = []
        /// States published since the last connection's send.
        var unsentStates: Set<String> = []
        var events: [MQTTMessage] = []
        var stopped = false
        var figures = Figures()
        var droppedUnreported = 0
    }

    public let options: MQTTClientOptions
    private let outbox = Mutex(Outbox())
    /// Wakes the client's thread from its wait on the socket; nil only when the process is out of descriptors.
    private let waker = WakePipe()
    private let logger: Logger
    private let connected: @Sendable () -> [MQTTMessage]
    private let received: @Sendable (MQTTMessage) -> Void
    private let finished = Condition()
    private let done = Atomic(false)

    /// `connected`: messages to send first on every connection (discovery);
    /// `received`: a message on a subscribed topic, on the client's thread.
    public init(
        options: MQTTClientOptions, logger: Logger, connected: @escaping @Sendable () -> [MQTTMessage] = { [] },
        received: @escaping @Sendable (MQTTMessage) -> Void
    ) {
        self.options = options
        self.logger = logger
        self.connected = connected
        self.received = received
        startThread(named: "sentry-mqtt") { [self] in
            run()
            finished.withLock {
                done.store(true, ordering: .relaxed)
                finished.broadcast()
            }
        }
    }

    public var figures: Figures { outbox.withLock { $0.figures } }

    /// Whether the client's thread has ended (after `stop`).
    var hasEnded: Bool { done.load(ordering: .relaxed) }

    /// Hands `message` over; returns at once.
    public func publish(_ message: MQTTMessage) {
        let dropped: Int = outbox.withLock { outbox in
            if message.qos == 0 {
                if outbox.states.updateValue(message, forKey: message.topic) == nil { outbox.stateOrder.append(message.topic) }
                outbox.unsentStates.insert(message.topic)
                return 0
            }
            outbox.events.append(message)
            outbox.figures.queued += 1
            guard outbox.events.count > options.queueLimit else { return 0 }
            outbox.events.removeFirst()
            outbox.figures.dropped += 1
            outbox.droppedUnreported += 1
            return outbox.droppedUnreported
        }
        // Said when the first goes and then at every hundredth, not for each.
        if dropped == 1 || (dropped > 0 && dropped % 100 == 0) {
            logger.warning("mqtt: the broker is away and \(options.queueLimit) events wait; the oldest are dropped (\(dropped) so far)")
        }
        waker?.wake()
    }

    /// Waits until every QoS 1 message handed over has been acknowledged (or dropped), at most `seconds`; whether they were.
    public func waitUntilAcknowledged(within seconds: Double) -> Bool {
        let deadline = monotonicSeconds() + seconds
        while monotonicSeconds() < deadline {
            let figures = figures
            if figures.acknowledged + figures.dropped >= figures.queued { return true }
            _ = finished.wait(seconds: 0.05) { false }
        }
        return false
    }

    /// Publishes the farewell, disconnects and ends the thread (within a few seconds).
    public func stop() {
        outbox.withLock { $0.stopped = true }
        waker?.wake()
        // The thread may be waiting out a backoff instead.
        finished.withLock { finished.broadcast() }
        _ = finished.wait(seconds: BrokerConnection.writeTimeout + 2) { done.load(ordering: .relaxed) }
    }

    private var isStopped: Bool { outbox.withLock { $0.stopped } }

    // MARK: The client's thread

    private func run() {
        guard let waker else { return logger.error("mqtt: out of file descriptors; no broker is talked to in this run") }
        var backoff = 1.0
        var lastComplaint: (reason: String, at: Double)?
        while !isStopped {
            do {
                try session(waker)
                backoff = 1
            } catch {
                outbox.withLock { $0.figures.connected = false }
                let now = monotonicSeconds()
                if lastComplaint?.reason != error.description || now - (lastComplaint?.at ?? 0) >= 60 {
                    logger.error("mqtt: broker \(options.host):\(options.port): \(error.description); trying again in \(Int(backoff)) s (said again in a minute if it holds)")
                    lastComplaint = (error.description, now)
                }
                guard !isStopped else { return }
                _ = finished.wait(seconds: backoff) { outbox.withLock { $0.stopped } }
                backoff = min(backoff * 2, 30)
            }
        }
    }

    /// One connection's messages: those it sends first, and the QoS 1 ones in flight.
    private final class Session {
        /// `handedOver`: it came through `publish` (and counts in `Figures.queued`), so it is
        /// carried to the next connection until acknowledged; what a connection announces
        /// (`online`, discovery) is made afresh for each and never carried.
        typealias Entry = (message: MQTTMessage, handedOver: Bool)
        /// To send before anything new: this connection's announcements, then the events the
        /// last one left unacknowledged (marked as sent before). Within the in-flight limit, as all QoS 1 is.
        var first: [(entry: Entry, duplicate: Bool)] = []
        /// Sent and not yet acknowledged, by packet id, oldest first.
        var inFlight: [(id: UInt16, message: MQTTMessage, handedOver: Bool)] = []
        var nextID: UInt16 = 1
        var lastSent = monotonicSeconds()
        var pingSentAt: Double?
        /// When events may go: set once `first` has gone out.
        var eventsFrom: Double?

        func takeID() -> UInt16 {
            defer { nextID = nextID == .max ? 1 : nextID + 1 }
            return nextID
        }

        /// The events handed over and not acknowledged, in the order they were first sent.
        var unacknowledgedEvents: [Entry] {
            inFlight.filter(\.handedOver).map { ($0.message, true) } + first.map(\.entry).filter(\.handedOver)
        }
    }

    /// One connection, from CONNECT to its end; throws why it ended (unless stopped).
    private func session(_ waker: WakePipe) throws(MQTTConnectionError) {
        let connection = try BrokerConnection(host: options.host, port: options.port, timeout: options.connectTimeout, wake: waker) { isStopped }
        var connect = MQTTPacket.Connect(clientID: options.clientID, keepAlive: options.keepAlive, username: options.username, password: options.password)
        connect.will = options.will
        try connection.write(MQTTPacket.connect(connect).bytes)
        var reader = MQTTPacketReader()
        let deadline = monotonicSeconds() + options.connectTimeout
        var answer: MQTTPacket?
        while answer == nil {
            let left = deadline - monotonicSeconds()
            guard left > 0 else {
                let timeout = options.connectTimeout
                let shown = timeout == timeout.rounded() ? "\(Int(timeout))" : "\(timeout)"
                throw MQTTConnectionError("no CONNACK within \(shown) s of CONNECT; is it an MQTT broker?")
            }
            reader.append(try connection.read(waitingAtMost: left))
            if let first = reader.firstByte, first != 0x20 {
                throw MQTTConnectionError("not MQTT: it answered CONNECT with a byte \(first) where CONNACK's 32 belongs; is it an MQTT broker's port?")
            }
            do { answer = try reader.next() } catch { throw MQTTConnectionError("not MQTT: \(error.description)") }
            if isStopped { return }
        }
        guard case .connack(_, let refusal) = answer else { throw MQTTConnectionError("it answered CONNECT with another packet than CONNACK") }
        if let refusal { throw MQTTConnectionError("refused the connection: \(refusal)") }
        let count = outbox.withLock { outbox -> Int in
            outbox.figures.connections += 1
            outbox.figures.connected = true
            // Every state goes out again on a new connection.
            outbox.unsentStates = Set(outbox.stateOrder)
            return outbox.figures.connections
        }
        logger.notice("mqtt: connected to \(options.host):\(options.port) as \(options.clientID)\(count > 1 ? " again" : "")")
        let session = Session()
        // The events the last connection left unacknowledged move into this one before anything
        // can fail, and whatever of them is still unacknowledged when it ends moves on again.
        let carried = inFlightCarriedOver.withLock { carried in
            defer { carried = [] }
            return carried
        }
        session.first = connected().map { (($0, false), false) } + carried.map { ($0, true) }
        defer { inFlightCarriedOver.withLock { $0 = session.unacknowledgedEvents } }
        if !options.subscriptions.isEmpty {
            try connection.write(MQTTPacket.subscribe(id: session.takeID(), filters: options.subscriptions.map { ($0, 1) }).bytes)
        }
        while true {
            if isStopped { return try farewell(on: connection) }
            try sendWaiting(on: connection, session)
            let now = monotonicSeconds()
            let keepAlive = Double(options.keepAlive)
            if let pingSentAt = session.pingSentAt, now - pingSentAt > max(5, keepAlive / 2) {
                throw MQTTConnectionError("it stopped answering (no PINGRESP within \(Int(max(5, keepAlive / 2))) s)")
            }
            if session.pingSentAt == nil, now - session.lastSent >= keepAlive * 0.75 {
                try connection.write(MQTTPacket.pingreq.bytes)
                session.pingSentAt = now
                session.lastSent = now
            }
            // What came with the last read (or with the CONNACK) first, then wait for more.
            while true {
                let packet: MQTTPacket?
                do { packet = try reader.next() } catch { throw MQTTConnectionError("it broke the protocol: \(error.description)") }
                guard let packet else { break }
                try handle(packet, on: connection, session)
            }
            reader.append(try connection.read(waitingAtMost: min(1, keepAlive * 0.75 - (now - session.lastSent))))
        }
    }

    /// The events a connection ended with unacknowledged (sent without a PUBACK, or not yet sent).
    private let inFlightCarriedOver = Mutex<[(message: MQTTMessage, handedOver: Bool)]>([])

    /// At most this many QoS 1 messages wait for their PUBACK at once.
    static let inFlightLimit = 16

    /// Sends what waits, QoS 1 within the in-flight limit: the connection's first messages, then
    /// the newest states, then events. An event is in `first` or in flight from the moment it
    /// leaves the outbox (`send` puts it in flight before writing), so a failed write never loses one.
    private func sendWaiting(on connection: BrokerConnection, _ session: Session) throws(MQTTConnectionError) {
        try sendFirst(on: connection, session)
        guard session.first.isEmpty else { return }
        let now = monotonicSeconds()
        if session.eventsFrom == nil { session.eventsFrom = now + options.eventsAfterAnnouncing }
        let states = outbox.withLock { outbox in
            defer { outbox.unsentStates = [] }
            return outbox.stateOrder.filter(outbox.unsentStates.contains).compactMap { outbox.states[$0] }
        }
        for message in states { try send(message, duplicate: false, handedOver: true, on: connection, session) }
        while session.inFlight.count < Self.inFlightLimit, now >= session.eventsFrom ?? .infinity {
            let events = outbox.withLock { outbox in
                defer { outbox.events.removeFirst(min(outbox.events.count, Self.inFlightLimit - session.inFlight.count)) }
                return outbox.events.prefix(Self.inFlightLimit - session.inFlight.count)
            }
            guard !events.isEmpty else { return }
            session.first = events.map { (($0, true), false) }
            try sendFirst(on: connection, session)
        }
    }

    private func sendFirst(on connection: BrokerConnection, _ session: Session) throws(MQTTConnectionError) {
        while let next = session.first.first, next.entry.message.qos == 0 || session.inFlight.count < Self.inFlightLimit {
            session.first.removeFirst()
            try send(next.entry.message, duplicate: next.duplicate, handedOver: next.entry.handedOver, on: connection, session)
        }
    }

    private func send(
        _ message: MQTTMessage, duplicate: Bool, handedOver: Bool, on connection: BrokerConnection, _ session: Session
    ) throws(MQTTConnectionError) {
        var id: UInt16?
        if message.qos > 0 {
            id = session.takeID()
            session.inFlight.append((id!, message, handedOver))
        }
        try connection.write(MQTTPacket.publish(message, id: id, duplicate: duplicate).bytes)
        session.lastSent = monotonicSeconds()
        outbox.withLock { $0.figures.published += 1 }
    }

    private func handle(_ packet: MQTTPacket, on connection: BrokerConnection, _ session: Session) throws(MQTTConnectionError) {
        switch packet {
        case .publish(let message, let id, _):
            guard options.subscriptions.contains(where: { topicFilter($0, matches: message.topic) }) else {
                throw MQTTConnectionError("it sent a message on \(message.topic), which sentry did not subscribe to")
            }
            if let id { try connection.write(MQTTPacket.puback(id: id).bytes) }
            outbox.withLock { $0.figures.received += 1 }
            received(message)
        case .puback(let id):
            guard let index = session.inFlight.firstIndex(where: { $0.id == id }) else { break }
            let handedOver = session.inFlight.remove(at: index).handedOver
            // The queue has drained: say once how many it lost while the broker was away.
            let dropped = outbox.withLock { outbox -> Int in
                if handedOver { outbox.figures.acknowledged += 1 }
                guard outbox.events.isEmpty else { return 0 }
                defer { outbox.droppedUnreported = 0 }
                return outbox.droppedUnreported
            }
            if dropped > 0 { logger.warning("mqtt: \(dropped) events were dropped while the broker was away") }
        case .suback(_, let granted):
            for (filter, qos) in zip(options.subscriptions, granted) where qos == nil {
                logger.error("mqtt: the broker refused the subscription to \(filter); check its ACL")
            }
        case .pingresp:
            session.pingSentAt = nil
        case .connack, .connect, .subscribe, .pingreq, .disconnect:
            throw MQTTConnectionError("it sent a packet a connected client never takes")
        }
    }

    private func farewell(on connection: BrokerConnection) throws(MQTTConnectionError) {
        for message in options.farewell { try connection.write(MQTTPacket.publish(message, id: nil, duplicate: false).bytes) }
        try connection.write(MQTTPacket.disconnect.bytes)
    }
}

/// Whether `topic` is one `filter` names (§4.7.1: `+` one level, `#` the rest).
public func topicFilter(_ filter: String, matches topic: String) -> Bool {
    let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
    let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
    for (index, level) in filterLevels.enumerated() {
        if level == "#" { return true }
        guard index < topicLevels.count, level == "+" || level == topicLevels[index] else { return false }
    }
    return filterLevels.count == topicLevels.count
}
