import FaceDetection
import FaceMesh
import FaceRecognition
import Geometry
import Imaging
import Logging
import TextOutput
import Threading
import Tracking

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

/// Who each face in view is, as far as the pipeline can ask (`FrameResult.person`,
/// `--target unknown`).
public protocol FaceIdentities: AnyObject, Sendable {
    /// The person the face tracked as `id` was recognised as; nil until it has been read.
    func person(of id: Int) -> PersonMatch?
}

/// Reads who each face in view is, once per face (a new face, a face that came back
/// as another), off the frame loop: the chip and dlib's network cost about 20 ms, a
/// frame's budget, so a thread of its own takes the frame and the face, and the frames
/// go on. The target comes first, read from the points the mesh follows it with; any
/// other face is read from its box, the mesh run once on it here. The answer reaches
/// the frames after it, the lock's event among them (`--lock-after` is far longer than
/// a reading). One reading at a time: a face that appears while another is read waits
/// for a later frame. Answers are kept only for faces still tracked.
final class FaceIdentification: FrameObserver, FaceIdentities, @unchecked Sendable {
    private struct Job {
        enum Face {
            /// The target, with the points the mesh followed it by.
            case landmarks(FaceLandmarks)
            /// Another face in view: the mesh is run on its box first.
            case box(Box)
        }

        let id: Int
        let image: GrayImage
        let colour: ChromaPlanes?
        let face: Face
    }

    private let condition = Condition()
    // Guarded by `condition`.
    private var job: Job?
    private var answers: [Int: PersonMatch] = [:]
    private var stopping = false
    private var finished = false
    /// The frame loop's own: the faces handed over, each once.
    private var asked: Set<Int> = []
    private let known: KnownPeople
    private let logger: Logger

    init(_ settings: RecognitionSettings, logger: Logger) {
        known = settings.people
        self.logger = logger
        let worker = Worker(embedder: settings.embedder)
        startThread(named: "recognition") { [self] in self.work(worker) }
    }

    /// The networks live on the recognition thread alone; the mesh is made at its first box.
    private final class Worker: @unchecked Sendable {
        let embedder: FaceEmbedder
        private var madeMesh: Result<FaceMesh, any Error>?

        init(embedder: FaceEmbedder) { self.embedder = embedder }

        func mesh(logger: Logger) -> FaceMesh? {
            if madeMesh == nil {
                madeMesh = Result { try FaceMesh() }
                if case .failure(let error) = madeMesh { logger.warning("recognition: faces other than the target are not read: \(error)") }
            }
            return try? madeMesh?.get()
        }
    }

    func person(of id: Int) -> PersonMatch? { condition.withLock { answers[id] } }

    func didProcess(_ outcome: FrameOutcome) {
        let result = outcome.result
        let tracked = Set(result.tracks.map(\.id))
        asked.formIntersection(tracked)
        let next = nextFace(in: result)
        let handed = condition.withLock {
            answers = answers.filter { tracked.contains($0.key) }
            guard let next, job == nil, !stopping else { return false }
            job = Job(id: next.id, image: outcome.frame.image, colour: outcome.frame.chroma, face: next.face)
            condition.signal()
            return true
        }
        if handed, let next { asked.insert(next.id) }
    }

    /// The face to read next: the target first (by the mesh's points when the mesh follows
    /// it, else by its box), then the largest other in view.
    private func nextFace(in result: FrameResult) -> (id: Int, face: Job.Face)? {
        if let id = result.targetID, !asked.contains(id), let face = result.followedFace, face.isTarget {
            return (id, .landmarks(face.landmarks))
        }
        let unread = result.tracks.filter { $0.isVisible && !asked.contains($0.id) }
        let next = unread.first { $0.id == result.targetID } ?? unread.max { $0.box.area < $1.box.area }
        return next.map { ($0.id, .box($0.box)) }
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
            let landmarks: FaceLandmarks? =
                switch job.face {
                case .landmarks(let points): points
                case .box(let box): worker.mesh(logger: logger)?.landmarks(in: job.image, colour: job.colour, region: Self.region(of: box))
                }
            let match = landmarks.map { known.identify(worker.embedder.embedding(ofChip: FaceChip(landmarks: $0).extract(from: job.image, colour: job.colour))) }
            condition.withLock {
                if let match { answers[job.id] = match }
                self.job = nil
            }
            if let match { logger.notice("face \(job.id) is \(Self.describe(match))") }
        }
        condition.withLock {
            finished = true
            condition.broadcast()
        }
    }

    /// The mesh's crop for a face known only by its box: upright, as a cascade's box is taken.
    static func region(of box: Box) -> FaceRegion {
        FaceMesh.region(for: ScoredFace(x: Float(box.x), y: Float(box.y), width: Float(box.width), height: Float(box.height), score: 1))
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
