import EventPictures
import Events
import Expressions
import Geometry
import Imaging
import Logging
import MQTT
import MQTTTopics
import MonotonicTime
import RunControl
import Synchronization
import Tracking
import TurretLinks
import Video

/// `--mqtt`: the broker, who sentry is there, and what it tells Home Assistant.
public struct MQTTSettings: Sendable {
    public var broker: BrokerAddress
    public var password: [UInt8]?
    public var topics: SentryTopics
    /// sentry's version, for Home Assistant's device.
    public var version: String
    /// Unique to this process: the broker drops a client when another connects with its id.
    public var clientID: String
    /// Said at start when the name is one many machines share.
    public var nameWarning: String?

    public init(broker: BrokerAddress, password: [UInt8]?, topics: SentryTopics, version: String) {
        (self.broker, self.password, self.topics, self.version) = (broker, password, topics, version)
        clientID = "sentry-\(topics.name)"
    }
}

/// sentry on an MQTT broker: an observer of the frame's outcome (its state,
/// at most four times a second and only when it changed; its events) and a
/// control source (`set` and `command`, checked by the same code as the
/// console's requests, refusals answered on `error`). The frame loop only
/// hands messages to the client, whose own thread talks to the broker.
/// Nothing reaches the turret that the console could not send, and `--fire`
/// stays as the run was started.
final class MQTTBridge: FrameObserver {
    /// The state is published at most this often (seconds), and at least this
    /// often while only the frame rate changes.
    static let shortestInterval = 0.25
    static let longestInterval = 10.0

    private let client: MQTTClient
    private let topics: SentryTopics
    private let session: any ControlSession
    private let logger: Logger
    private var published: (state: PublishedState, at: Double)?
    private var rate = FrameRateMeter()
    /// Whether the face is read (a live setting): looked up once a second, not every frame.
    private var expressions: (on: Bool, at: Double) = (false, -.infinity)
    private let requests: Requests
    /// Encodes the face of each event for the picture, when no `--events` folder does.
    private let faces: FacePictures?

    /// `encodesFaces`: encode each event's face here (no `--events` folder does it, and hands it to `faceSink`).
    init(settings: MQTTSettings, session: any ControlSession, encodesFaces: Bool, logger: Logger) {
        let topics = settings.topics
        let discovery = HomeAssistantDiscovery(topics: topics, version: settings.version)
        var options = MQTTClientOptions(host: settings.broker.host, port: settings.broker.port, clientID: settings.clientID)
        options.username = settings.broker.username
        options.password = settings.password
        options.will = topics.offline
        options.farewell = [topics.offline]
        options.subscriptions = topics.subscriptions
        // Home Assistant subscribes to the event topic once it has read the discovery: an arrival
        // published with the discovery (sentry starting with someone in view) would reach nobody.
        // 1.5 s was enough for an idle Home Assistant, not for one on a busy host (the test
        // suite's); events wait, they are not lost, so the margin costs only their delay.
        options.eventsAfterAnnouncing = 3
        self.topics = topics
        self.session = session
        self.logger = logger
        let requests = Requests(topics: topics, discovery: discovery, session: session, logger: logger)
        self.requests = requests
        let client = MQTTClient(options: options, logger: logger, connected: { [topics.online] + discovery.messages }) { message in requests.handle(message) }
        self.client = client
        requests.client.withLock { $0 = client }
        faces = encodesFaces ? FacePictures { [client, topics] jpeg in client.publish(topics.face(jpeg)) } : nil
        logger.notice("mqtt: publishing as \(topics.base) on \(settings.broker)")
        if let warning = settings.nameWarning { logger.warning("\(warning)") }
    }

    func didProcess(_ outcome: FrameOutcome) {
        let result = outcome.result, frame = outcome.frame
        for event in result.events { publish(outcome.record(of: event), frame: frame) }
        let size = (width: frame.image.width, height: frame.image.height)
        requests.frameSize.withLock { $0 = size }
        let now = monotonicSeconds()
        let fps = rate.tick(at: now)
        if now - expressions.at >= 1 { expressions = (session.settings["expressions"] == .bool(true), now) }
        let state = PublishedState(
            faces: result.detections.count, target: result.target.map { [$0.x, $0.y, $0.width, $0.height] }, pan: result.commanded.pan,
            tilt: result.commanded.tilt,
            mode: StatusLine.hud(for: outcome),
            locked: result.isLocked, steering: outcome.steering.name, serial: outcome.link.description, fps: Int(fps.rounded()),
            expressions: expressions.on, states: result.followedFace.map { face in face.states.map(\.rawValue).sorted() },
            armed: outcome.settings.fire != nil, heldFire: result.heldFire?.rawValue, person: result.personName)
        if let published {
            let changed = !state.sameApartFromRate(as: published.state)
            let since = now - published.at
            guard (changed && since >= Self.shortestInterval) || (state != published.state && since >= Self.longestInterval) else { return }
        }
        published = (state, now)
        client.publish(topics.state(state))
    }

    func cameraLost(_ error: VideoError, lost: CameraLossEvent?) {
        if let lost { publish(lost.record, frame: lost.lastFrame) }
    }

    /// An event on its topics, and its face for the picture (unless `--events` encodes it).
    private func publish(_ record: EventRecord, frame: Frame) {
        for message in topics.event(record) { client.publish(message) }
        faces?.submit(face: record.box, frame: frame)
    }

    /// Takes the face of each event just kept (`--events`), for Home Assistant's image entity.
    var faceSink: @Sendable ([UInt8]) -> Void { { [client, topics] jpeg in client.publish(topics.face(jpeg)) } }

    /// Ends the face encoder, then the client (its `offline` and DISCONNECT): a service of the run (`RunServices`).
    func stop() {
        faces?.stop()
        client.stop()
    }

    /// What comes from the broker, on the client's thread.
    final class Requests: Sendable {
        let topics: SentryTopics
        let discovery: HomeAssistantDiscovery
        let session: any ControlSession
        let logger: Logger
        /// Set once the client exists (it hands messages here).
        let client = Mutex<MQTTClient?>(nil)
        /// The last frame's size, for a `point` command.
        let frameSize = Mutex<(width: Int, height: Int)?>(nil)
        /// The retained requests refused so far (topic and payload), each said once.
        let refusedRetained = Mutex<Set<String>>([])

        init(topics: SentryTopics, discovery: HomeAssistantDiscovery, session: any ControlSession, logger: Logger) {
            (self.topics, self.discovery, self.session, self.logger) = (topics, discovery, session, logger)
        }

        func handle(_ message: MQTTMessage) {
            let frame = frameSize.withLock { $0 }
            let request = topics.request(in: message)
            // A retained request is one made once, replayed by the broker at every (re)connection:
            // obeyed, it would override a person's steering each time, on every sentry it names.
            if message.retain, request.isPersonsRequest {
                // Said once per topic and payload: the broker replays it at every reconnection.
                guard refusedRetained.withLock({ $0.insert("\(message.topic) \(message.payload)").inserted }) else { return }
                let reason =
                    "retained requests are not obeyed (the broker would replay it at every reconnection); publish it without the retain flag, and clear this one: mosquitto_pub -r -n -t \(message.topic)"
                logger.warning("mqtt: refused on \(message.topic): \(reason)")
                return publish(topics.error(reason, answering: message))
            }
            do throws(ControlRefusal) {
                switch request {
                case .settings(let body):
                    let wanted = try ControlRequests.settingChanges(fromJSON: body, known: Set(session.settings.keys))
                    let after = try session.change(wanted).get()
                    logger.notice("mqtt: settings changed on \(message.topic): \(ControlRequests.describe(wanted, after: after))")
                case .command(let body):
                    let steering = try ControlRequests.steering(fromJSON: body, frame: frame)
                    session.steer(steering)
                    logger.info("mqtt: \(steering.action) on \(message.topic)")
                case .homeAssistantOnline:
                    for config in discovery.messages { publish(config) }
                case .none:
                    break
                }
            } catch {
                logger.warning("mqtt: refused on \(message.topic): \(error.description)")
                publish(topics.error(error.description, answering: message))
            }
        }

        private func publish(_ message: MQTTMessage) { client.withLock { $0 }?.publish(message) }
    }
}

extension SentryTopics.Request {
    /// A setting or a command: what a person asks for, which a retained message must not replay.
    var isPersonsRequest: Bool {
        switch self {
        case .settings, .command: true
        case .homeAssistantOnline, .none: false
        }
    }
}

extension Steering {
    /// As the console and the MQTT state name it.
    var name: String {
        switch self {
        case .tracking: "auto"
        case .manual: "manual"
        case .manualScan: "manual-scan"
        }
    }
}
