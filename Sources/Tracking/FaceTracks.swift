import Geometry

/// A face followed across frames: the same person keeps the same `id`.
public struct TrackedFace: Sendable, Equatable {
    public let id: Int
    /// The box it was last seen in.
    public var box: Box
    public var lastSeen: Double
    /// Seen in the latest frame.
    public var isVisible: Bool
    /// Pixels per second its centre moved, averaged over its last sightings:
    /// a walker missed by the detector for a few frames is looked for where
    /// it has walked to, not where it was.
    public var velocity: (x: Double, y: Double) = (0, 0)

    public init(id: Int, box: Box, lastSeen: Double, isVisible: Bool) {
        self.id = id
        self.box = box
        self.lastSeen = lastSeen
        self.isVisible = isVisible
    }

    public static func == (a: TrackedFace, b: TrackedFace) -> Bool {
        a.id == b.id && a.box == b.box && a.lastSeen == b.lastSeen && a.isVisible == b.isVisible && a.velocity == b.velocity
    }

    /// Where its box should be at `time` if it kept walking (at most `walkLimit` seconds on).
    func predictedBox(at time: Double) -> Box {
        let ahead = min(max(time - lastSeen, 0), Self.walkLimit)
        var box = box
        box.x += Int((velocity.x * ahead).rounded())
        box.y += Int((velocity.y * ahead).rounded())
        return box
    }

    /// Seconds a face's walk is carried on while the detector misses it.
    static let walkLimit = 0.5
    /// How much a new sighting moves the velocity (the rest is the old one's).
    static let velocityWeight = 0.3
}

/// Gives the faces of each frame identities: a box that overlaps, or lies
/// close to, a face of the previous frames is that face; any other box is a
/// new face. Faces unseen for `forgetAfter` seconds are dropped.
public struct FaceTracks: Sendable {
    public private(set) var faces: [TrackedFace] = []
    public var forgetAfter: Double
    private var nextID = 1

    /// Boxes at least this overlapping (IoU) are the same face, whatever else.
    static let sameFaceOverlap = 0.25
    /// Otherwise a box whose centre is within this many of the face's widths.
    static let sameFaceDistance = 0.75

    public init(forgetAfter: Double) {
        self.forgetAfter = forgetAfter
    }

    /// Matches `boxes` to the known faces, greediest match first, and
    /// returns the tracks (visible ones carry this frame's box).
    @discardableResult
    public mutating func update(with boxes: [Box], at time: Double) -> [TrackedFace] {
        var pairs: [(score: Double, face: Int, box: Int)] = []
        for (f, face) in faces.enumerated() {
            for (b, box) in boxes.enumerated() {
                // Where it was, or where its walk has taken it: whichever the box continues better
                // (a face that turned back is where it was; one the detector missed has walked on).
                let scores = [Self.matchScore(face.box, box), Self.matchScore(face.predictedBox(at: time), box)].compactMap { $0 }
                if let score = scores.max() { pairs.append((score, f, b)) }
            }
        }
        pairs.sort { $0.score > $1.score }
        var faceTaken = [Bool](repeating: false, count: faces.count)
        var boxTaken = [Bool](repeating: false, count: boxes.count)
        for index in faces.indices { faces[index].isVisible = false }
        for pair in pairs where !faceTaken[pair.face] && !boxTaken[pair.box] {
            faceTaken[pair.face] = true
            boxTaken[pair.box] = true
            let face = faces[pair.face], box = boxes[pair.box]
            if time > face.lastSeen {
                let step = (x: (box.center.x - face.box.center.x) / (time - face.lastSeen), y: (box.center.y - face.box.center.y) / (time - face.lastSeen))
                let weight = TrackedFace.velocityWeight
                faces[pair.face].velocity = (face.velocity.x + weight * (step.x - face.velocity.x), face.velocity.y + weight * (step.y - face.velocity.y))
            }
            faces[pair.face].box = box
            faces[pair.face].lastSeen = time
            faces[pair.face].isVisible = true
        }
        faces.removeAll { !$0.isVisible && time - $0.lastSeen > forgetAfter }
        for (b, box) in boxes.enumerated() where !boxTaken[b] {
            faces.append(TrackedFace(id: nextID, box: box, lastSeen: time, isVisible: true))
            nextID += 1
        }
        return faces
    }

    /// Forgets every face (the camera was replaced or lost).
    public mutating func removeAll() {
        faces = []
    }

    /// How well `box` continues `face`: overlap first (1...2), then
    /// nearness (0...1); `nil` when it is a different face.
    static func matchScore(_ face: Box, _ box: Box) -> Double? {
        let overlap = face.intersectionOverUnion(box)
        if overlap >= sameFaceOverlap { return 1 + overlap }
        let a = face.center, b = box.center
        let distance = ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
        let reach = sameFaceDistance * Double(max(face.width, face.height, 1))
        return distance < reach ? 1 - distance / reach : nil
    }
}

/// Which face is the target, and when to let go of it:
///
/// - a new target is the SPEC §1.3 choice among the visible faces (largest,
///   then nearest the last target, then first);
/// - the target stays the target until another face is larger by
///   `switchMargin` (0.2: 20 % more area) for `switchFrames` frames in a
///   row, so two faces of about the same size never make the aim flip-flop;
/// - a target out of sight is held for `lostAfter` seconds, then dropped;
/// - faces `passedOver` (`--target unknown`: the household) are chosen only
///   when no other face is in view, and let go of as soon as one is.
///
/// `switchMargin 0` with `switchFrames 1` is SPEC §1.3 frame by frame.
public struct StickyTarget: Sendable {
    public var switchMargin: Double
    public var switchFrames: Int
    public var lostAfter: Double
    public private(set) var targetID: Int?
    private var lastTargetBox: Box?
    private var challenger: (id: Int, frames: Int)?

    public init(switchMargin: Double = 0.2, switchFrames: Int = 3, lostAfter: Double = 0) {
        self.switchMargin = switchMargin
        self.switchFrames = switchFrames
        self.lostAfter = lostAfter
    }

    /// The target among `faces` at `time`: visible, or held out of sight;
    /// `nil` when there is none.
    public mutating func choose(among faces: [TrackedFace], at time: Double, passedOver: Set<Int> = []) -> TrackedFace? {
        let visible = faces.filter(\.isVisible)
        let others = visible.filter { !passedOver.contains($0.id) }
        // The faces a target may be: any but those passed over, unless they are all there is.
        let eligible = others.isEmpty ? visible : others
        if let id = targetID, let target = faces.first(where: { $0.id == id }),
            target.isVisible || time - target.lastSeen < lostAfter, !passedOver.contains(id) || others.isEmpty
        {
            guard target.isVisible else { return target }
            if let rival = Self.largestOther(in: eligible, than: id, anchor: target.box),
                Double(rival.box.area) > Double(target.box.area) * (1 + switchMargin)
            {
                let frames = challenger?.id == rival.id ? challenger!.frames + 1 : 1
                challenger = (rival.id, frames)
                if frames >= switchFrames { return take(rival) }
            } else {
                challenger = nil
            }
            lastTargetBox = target.box
            return target
        }
        guard let index = TargetSelector.largest(of: eligible.map(\.box), nearest: lastTargetBox) else {
            targetID = nil
            challenger = nil
            return nil
        }
        return take(eligible[index])
    }

    private mutating func take(_ face: TrackedFace) -> TrackedFace {
        targetID = face.id
        lastTargetBox = face.box
        challenger = nil
        return face
    }

    private static func largestOther(in visible: [TrackedFace], than id: Int, anchor: Box) -> TrackedFace? {
        let others = visible.filter { $0.id != id }
        return TargetSelector.largest(of: others.map(\.box), nearest: anchor).map { others[$0] }
    }

    /// Lets go of the target.
    public mutating func reset() {
        targetID = nil
        lastTargetBox = nil
        challenger = nil
    }
}
