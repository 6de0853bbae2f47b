import FaceRecognition
import Geometry
import Imaging
import Logging
import TextOutput
import Threading

/// `--known DIR`: the household the run recognises, and dlib's network to do it with.
///
/// Unchecked: the embedder that enrolled the household is handed over whole (reading
/// the model again costs a second of the run's start); from then on the recognition
/// thread alone uses it.
public struct RecognitionSettings: @unchecked Sendable {
    public var people: KnownPeople
    public let embedder: FaceEmbedder

    public init(people: KnownPeople, embedder: FaceEmbedder) {
        (self.people, self.embedder) = (people, embedder)
    }
}

/// Who each target is, as far as the pipeline can ask (`Pipeline`'s `FrameResult.person`).
public protocol TargetIdentities: AnyObject, Sendable {
    /// The person target `id` was recognised as; nil until it has been read.
    func person(of id: Int) -> PersonMatch?
}

/// Reads who the target is once per target (a new target, a face that came back as
/// another), off the frame loop: the chip and dlib's network cost about 20 ms, a frame's
/// budget, so a thread of its own takes the followed face's points and the frame, and
/// the frames go on. The answer reaches the frames after it, the lock's event among them
/// (`--lock-after` is far longer than a reading). One reading at a time: a target that
/// appears while another is read waits for the next frame.
final class TargetRecognition: FrameObserver, TargetIdentities, @unchecked Sendable {
    private struct Job {
        let id: Int
        let image: GrayImage
        let colour: ChromaPlanes?
        let landmarks: FaceLandmarks
    }

    private let condition = Condition()
    // Guarded by `condition`.
    private var job: Job?
    /// The last target read and who it is: only the followed target is ever asked about.
    private var answer: (id: Int, person: PersonMatch)?
    private var stopping = false
    private var finished = false
    /// The frame loop's own: the last target handed over.
    private var asked: Int?
    private let known: KnownPeople
    private let logger: Logger

    init(_ settings: RecognitionSettings, logger: Logger) {
        known = settings.people
        self.logger = logger
        let worker = Worker(embedder: settings.embedder)
        startThread(named: "recognition") { [self] in self.work(worker) }
    }

    /// The embedder lives on the recognition thread alone.
    private struct Worker: @unchecked Sendable { let embedder: FaceEmbedder }

    func person(of id: Int) -> PersonMatch? { condition.withLock { answer?.id == id ? answer?.person : nil } }

    func didProcess(_ outcome: FrameOutcome) {
        let result = outcome.result
        guard let id = result.targetID, id != asked, let face = result.followedFace, face.isTarget else { return }
        let handed = condition.withLock {
            guard job == nil, !stopping else { return false }
            job = Job(id: id, image: outcome.frame.image, colour: outcome.frame.chroma, landmarks: face.landmarks)
            condition.signal()
            return true
        }
        if handed { asked = id }
    }

    /// Ends the thread after the reading under way; returns when it has.
    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
            while !finished { condition.wait() }
        }
    }

    private func work(_ worker: Worker) {
        while let job = nextJob() {
            let chip = FaceChip(landmarks: job.landmarks).extract(from: job.image, colour: job.colour)
            let match = known.identify(worker.embedder.embedding(ofChip: chip))
            condition.withLock {
                answer = (job.id, match)
                self.job = nil
            }
            logger.notice("target \(job.id) is \(Self.describe(match))")
        }
        condition.withLock {
            finished = true
            condition.broadcast()
        }
    }

    private func nextJob() -> Job? {
        condition.withLock {
            while job == nil, !stopping { condition.wait() }
            return stopping ? nil : job
        }
    }

    /// `obama (0.33 from an enrolled photo)`, or `a stranger (nearest: biden, 0.83)`.
    static func describe(_ match: PersonMatch) -> String {
        let distance = String(printf: "%.2f", match.distance)
        if let name = match.name { return "\(name) (\(distance) from an enrolled photo)" }
        return "a stranger" + (match.nearest.map { " (nearest: \($0), \(distance))" } ?? "")
    }
}
