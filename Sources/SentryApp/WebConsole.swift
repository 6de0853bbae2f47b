import Config
import Console
import Detectors
import Events
import Expressions
import FaceDetection
import FoundationEssentials
import Geometry
import Imaging
import Logging
import MonotonicTime
import RunControl
import Serial
import ShootingRange
import Synchronization
import Tracking
import TurretProtocol
import TurretLinks
import Video
import WebServing

/// `--web`: where the console listens and how its settings are read and saved.
public struct WebOptions: Sendable {
    public var address: ListenAddress
    public var token: String?
    /// The names and pages it answers besides its own (`--web-allow-host`, `--web-allow-origin`).
    public var rules = SiteRules()
    /// At most this many video frames a second (`--web-fps`).
    public var framesPerSecond: Double = 15
    /// At most this many connections at once (`--web-max-clients`).
    public var maximumClients = ConsoleServer.defaultMaximumClients
    /// The file Save writes (the one `--config` reads).
    public var configPath: String
    /// Keys also given as flags: the flag wins over the file at the next start.
    public var keysGivenAsFlags: Set<String> = []
    /// Where Save writes when `configPath` cannot be written: the service's own
    /// folder (systemd's `STATE_DIRECTORY`), whose settings file is root's.
    public var stateDirectory: String?

    public init(address: ListenAddress, token: String?, configPath: String) {
        self.address = address
        self.token = token
        self.configPath = configPath
    }
}

/// `--web` seen from the frame loop: each frame's outcome published after
/// it; the console's requests go to the run's `ControlSession`. Nothing here
/// waits for the server; encoding and serving run on their own threads.
final class WebConsole: FrameObserver {
    let hub: ConsoleHub
    private let server: ConsoleServer
    /// The detector named in the last status, to log a change of it.
    private var detectorName: String
    private var rate = FrameRateMeter()
    /// On the range with the simulated servo: where the last darts landed.
    private let darts: RangeDarts?

    /// `history`: the events folder of `--events`, which the console shows.
    init(
        options: WebOptions, session: any ControlSession, detectorName: String, history: EventStore?, darts: RangeDarts? = nil, logger: Logger
    ) throws {
        self.darts = darts
        hub = try ConsoleHub(framesPerSecond: options.framesPerSecond)
        server = ConsoleServer(
            address: options.address, token: options.token, rules: options.rules, maximumClients: options.maximumClients, hub: hub,
            controller: session, history: history, log: RefusalLog(logger: logger))
        self.detectorName = detectorName
        do {
            try server.start()
        } catch {
            hub.close()
            throw error
        }
        logger.notice("web console on http://\(server.listening)/\(options.token == nil ? "" : "?token=…")")
    }

    /// Publishes what the pipeline did with the frame.
    func didProcess(_ outcome: FrameOutcome) {
        let result = outcome.result, frame = outcome.frame
        if outcome.detectorName != detectorName {
            detectorName = outcome.detectorName
            hub.log("settings", "detector: \(detectorName)")
        }
        let now = monotonicSeconds()
        let fps = rate.tick(at: now)
        var status = FrameStatus(
            frame: result.index, time: result.timestamp, width: frame.image.width, height: frame.image.height,
            faces: result.detections.map { FaceBox($0.box, score: $0.score) },
            target: result.target.flatMap { result.faces.firstIndex(of: $0) },
            aim: result.aim.map(Angles.init), commanded: Angles(result.commanded), commands: result.commands.map(\.description),
            mode: StatusLine.hud(for: outcome),
            steering: outcome.steering.name, locked: result.isLocked, fps: fps, detectMs: result.detectSeconds * 1000,
            loopMs: (now - outcome.capturedAt) * 1000, serial: outcome.link.description, detector: detectorName)
        status.face = result.followedFace.map(Self.faceStatus)
        let tracking = outcome.settings.tracking
        let (aimX, aimY) =
            tracking.mount == .turret
            ? (Double(frame.image.width) / 2, Double(frame.image.height) / 2)
            : tracking.mapper.framePoint(of: result.commanded, width: frame.image.width, height: frame.image.height, tiltEnabled: tracking.tiltEnabled)
        status.aimPoint = [aimX, aimY]
        status.armed = outcome.settings.fire != nil
        status.heldFire = result.heldFire?.rawValue
        status.person = result.personName
        if let box = result.target {
            let point = tracking.aimPoint(of: box, frameHeight: frame.image.height, below: outcome.settings.firePointBelow)
            status.firePoint = [point.x, point.y]
        }
        if let darts {
            status.darts = darts.marks(atFrame: frame.timestamp).map { DartStatus(x: $0.x, y: $0.y, hit: $0.hit) }
        }
        if let lead = result.leadAim {
            let point = tracking.mapper.framePoint(of: lead, width: frame.image.width, height: frame.image.height, tiltEnabled: tracking.tiltEnabled)
            status.leadPoint = [point.x, point.y]
        }
        hub.publish(status, frame: frame, capturedAt: outcome.capturedAt)
    }

    /// A reading as the page takes it (rounded: it is drawn, not computed with).
    static func faceStatus(_ face: FollowedFace) -> FaceReadingStatus {
        func round(_ value: Float, _ places: Float) -> Float { (value * places).rounded() / places }
        var points: [Float] = []
        points.reserveCapacity(2 * FaceLandmarks.count)
        for point in face.landmarks.points { points += [round(point.x, 10), round(point.y, 10)] }
        let (scores, pose, gaze) = (face.reading.scores, face.reading.pose, face.reading.gaze)
        return FaceReadingStatus(
            points: points,
            expressions: Dictionary(uniqueKeysWithValues: zip(ExpressionScores.names, scores.values.map { round($0, 100) })),
            states: ExpressionState.allCases.filter(face.states.contains).map(\.rawValue),
            pose: ["yaw": round(pose.yaw, 10), "pitch": round(pose.pitch, 10), "roll": round(pose.roll, 10)],
            gaze: [
                "left": [round(gaze.left.x, 100), round(gaze.left.y, 100)], "right": [round(gaze.right.x, 100), round(gaze.right.y, 100)],
            ],
            target: face.isTarget)
    }

    func cameraLost(_ error: VideoError, lost: CameraLossEvent?) {
        hub.log("camera", error.description)
    }

    func cameraBack(_ path: String) {
        hub.log("camera", "camera \(path) is back")
    }

    /// Ends the streams first, so that the server's connections can finish.
    func close() {
        hub.close()
        server.stop()
    }
}
