import Geometry
import Imaging

/// Full-frame detection at a chosen rate, and in between a look at the
/// neighbourhood of the face being followed only (`--detect-fps`).
///
/// A full-frame pass runs when one is due (every `interval` seconds of video
/// time) and whenever the followed face is lost. After it, the largest face
/// is followed: on the frames in between, `neighbourhood` runs on a square
/// around where that face was last seen, `neighbourhoodScale` times its size
/// (for BlazeFace the short-range model, a quarter of the full-range work on
/// a 128x128 input). The other faces of the last full pass are reported where
/// they were, so the tracker's choice of target does not flicker. With nobody
/// in view, the frames between passes cost no detection at all.
///
/// The two models draw a face's box a little differently (a couple of
/// pixels off, a few percent larger or smaller), so a still face would jump
/// between two boxes, and its aim between two degrees, at every full pass.
/// Full passes therefore also run the neighbourhood model on the same frame
/// (the first few after a face is found, then one a second) and keep the
/// difference, averaged (`BoxCorrection`); the boxes in between are corrected
/// by it, so for a still face they agree with the full pass.
public final class ScheduledDetector: FaceDetector {
    /// What ran on the last frame.
    public enum Pass: Sendable, Equatable {
        /// The whole frame.
        case full
        /// The neighbourhood of the followed face.
        case neighbourhood
        /// Nothing: no face to follow and no full pass due.
        case none
    }

    public let fullFrame: any FaceDetector
    public let neighbourhood: any RegionFaceDetector
    /// Seconds of video between full-frame passes.
    public let interval: Double
    /// The neighbourhood's side, as a multiple of the followed face's larger side.
    public static let neighbourhoodScale = 2.5
    /// The smallest neighbourhood, in pixels: the cascades' window is 24.
    static let smallestNeighbourhood = 32
    /// What ran on the last frame, for benchmarks and the console.
    public private(set) var lastPass = Pass.full
    public private(set) var lastScores: [Float] = []

    private var nextFullPass = -Double.infinity
    private var lastTime = -Double.infinity
    /// The face followed between full passes, with its score.
    private var followed: (box: Box, score: Float)?
    /// The full pass's box from the neighbourhood model's, measured on the
    /// same frame at the last full pass; `nil` until one was measured.
    public private(set) var correction: BoxCorrection?
    /// Seconds of video between measurements of the correction: the two
    /// models' difference on a face changes slowly (with its pose and the
    /// light), and measuring it costs a neighbourhood pass.
    public static let calibrationInterval = 1.0
    private var nextCalibration = -Double.infinity
    /// Measurements averaged into `correction`, and the passes that tried to measure.
    private var measurements = 0, attempts = 0
    /// Full passes in a row that measure before the interval grows to `calibrationInterval`
    /// (counted whether they found the face or not, so that the cost stays bounded).
    static let settlingMeasurements = 4
    /// How much a measurement moves the correction once it has settled.
    static let correctionWeight = 0.25
    /// The other faces of the last full pass, with their scores.
    private var others: [Box] = []
    private var otherScores: [Float] = []
    private var found: [Box] = []

    /// Full-frame passes with `fullFrame` at `rate` per second of video, `neighbourhood` in between.
    public init(fullFrame: any FaceDetector, neighbourhood: any RegionFaceDetector, rate: Double) {
        precondition(rate > 0)
        self.fullFrame = fullFrame
        self.neighbourhood = neighbourhood
        interval = 1 / rate
    }

    public var readsColour: Bool { fullFrame.readsColour || neighbourhood.readsColour }

    /// Without a time every frame is a full pass.
    public func detectFaces(in image: GrayImage, into faces: inout [Box]) {
        fullPass(in: image, colour: nil, at: lastTime, calibrating: false, into: &faces)
    }

    public func detectFaces(in image: GrayImage, at time: Double, into faces: inout [Box]) {
        detectFaces(in: image, colour: nil, at: time, into: &faces)
    }

    public func detectFaces(in image: GrayImage, colour: ChromaPlanes?, at time: Double, into faces: inout [Box]) {
        // Video time that goes back (a file played again) starts the schedule over.
        if time < lastTime { (nextFullPass, nextCalibration) = (-.infinity, -.infinity) }
        let previousTime = lastTime
        lastTime = time
        if time >= nextFullPass || min(image.width, image.height) < Self.smallestNeighbourhood {
            // Followed on the frame before (not a photo of another run, seconds earlier).
            let before = time - previousTime <= Self.followingGap ? followed : nil
            fullPass(in: image, colour: colour, at: time, calibrating: true, into: &faces)
            if let before { keepFollowing(before, in: image, colour: colour, into: &faces) }
            return
        }
        guard let last = followed else {
            lastPass = .none
            faces.removeAll(keepingCapacity: true)
            lastScores.removeAll(keepingCapacity: true)
            return
        }
        // The face nearest to where it was; none: it is lost, look at the whole frame now.
        guard let nearest = lookAround(last.box, in: image, colour: colour) else {
            return fullPass(in: image, colour: colour, at: time, calibrating: true, into: &faces)
        }
        // No measurement yet (the face was first seen by the last full pass): the first one
        // is this box against that pass's, a frame apart, rather than none: an uncorrected
        // box would move the aim a step that the first measurement moves back.
        if correction == nil, lastPass == .full { measure(from: nearest.box, to: last.box) }
        followed = (corrected(nearest.box), nearest.score ?? 1)
        lastPass = .neighbourhood
        report(into: &faces)
    }

    /// Seconds between two frames beyond which the face followed on the first is not looked for on the second.
    static let followingGap = 0.25

    /// After a scheduled full pass: the full-range model misses faces of 40
    /// pixels or less that the neighbourhood model still sees (a person a
    /// few metres away, walking), so a followed face the pass did not find
    /// is looked for where it was before it is given up; found, it is
    /// followed still, beside whatever the pass found.
    private func keepFollowing(_ before: (box: Box, score: Float), in image: GrayImage, colour: ChromaPlanes?, into faces: inout [Box]) {
        let reach = Double(max(before.box.width, before.box.height))
        guard min(image.width, image.height) >= Self.smallestNeighbourhood, !faces.contains(where: { Self.distance($0, before.box) < reach * reach }) else { return }
        guard let nearest = lookAround(before.box, in: image, colour: colour) else { return }
        let box = corrected(nearest.box)
        // A face the frame's edge cuts is leaving: the full pass's word stands.
        guard box.x >= 0, box.y >= 0, box.x + box.width <= image.width, box.y + box.height <= image.height else { return }
        let score = nearest.score ?? before.score
        if let followed {
            others.append(followed.box)
            otherScores.append(followed.score)
        }
        followed = (box, score)
        report(into: &faces)
    }

    /// `calibrating`: also measure the neighbourhood model's difference on
    /// the followed face (only worth it when neighbourhood passes follow).
    private func fullPass(in image: GrayImage, colour: ChromaPlanes?, at time: Double, calibrating: Bool, into faces: inout [Box]) {
        fullFrame.detectFaces(in: image, colour: colour, at: time, into: &found)
        nextFullPass = time >= nextFullPass && time < nextFullPass + interval ? nextFullPass + interval : time + interval
        lastPass = .full
        let scores = fullFrame.lastScores
        others.removeAll(keepingCapacity: true)
        otherScores.removeAll(keepingCapacity: true)
        followed = nil
        guard let largest = found.indices.max(by: { found[$0].area < found[$1].area }) else {
            faces.removeAll(keepingCapacity: true)
            lastScores.removeAll(keepingCapacity: true)
            return
        }
        for index in found.indices {
            let score = index < scores.count ? scores[index] : 1
            if index == largest {
                followed = (found[index], score)
            } else {
                others.append(found[index])
                otherScores.append(score)
            }
        }
        if calibrating, let followed {
            if nextCalibration == -.infinity {
                // Not on the first sight: the first aim waits for nothing but the detection
                // (a cold neighbourhood pass would delay it); the next full pass measures.
                nextCalibration = time + interval / 2
            } else if time >= nextCalibration {
                calibrate(on: followed.box, in: image, colour: colour)
                attempts += 1
                // Each measurement is one frame's noise from both models: the first few full
                // passes all measure, so the average settles within half a second; then once a second.
                nextCalibration = time + (attempts < Self.settlingMeasurements ? interval / 2 : Self.calibrationInterval)
            }
        }
        report(into: &faces)
    }

    /// Runs the neighbourhood model where the full pass found `face` and
    /// keeps how its box differs; keeps the last correction when it finds
    /// nothing there or something too unlike the face to be the same one.
    private func calibrate(on face: Box, in image: GrayImage, colour: ChromaPlanes?) {
        guard let nearest = lookAround(face, in: image, colour: colour) else { return }
        measure(from: nearest.box, to: face)
    }

    /// The neighbourhood model's face nearest to `face`, in the square around
    /// it, with its score (nil when the model gave none), as the model draws it.
    private func lookAround(_ face: Box, in image: GrayImage, colour: ChromaPlanes?) -> (box: Box, score: Float?)? {
        neighbourhood.detectFaces(in: image, colour: colour, region: Self.neighbourhood(of: face, in: image), into: &found)
        guard let nearest = found.indices.min(by: { Self.distance(found[$0], face) < Self.distance(found[$1], face) }) else { return nil }
        let scores = neighbourhood.lastScores
        return (found[nearest], nearest < scores.count ? scores[nearest] : nil)
    }

    /// A neighbourhood box drawn as the full pass draws it (the correction measured so far).
    private func corrected(_ box: Box) -> Box { correction.map { $0.applied(to: box) } ?? box }

    /// Moves the correction toward the one that turns `box` (the neighbourhood model's)
    /// into `face` (the full pass's); nothing when the two are too unlike.
    private func measure(from box: Box, to face: Box) {
        guard let measured = BoxCorrection(from: box, to: face) else { return }
        measurements += 1
        // A running mean over the first measurements, then an average that follows slow changes.
        let weight = max(1 / Double(measurements), Self.correctionWeight)
        correction = correction.map { $0.moved(toward: measured, by: weight) } ?? measured
    }

    /// The other faces, then the followed one.
    private func report(into faces: inout [Box]) {
        faces.removeAll(keepingCapacity: true)
        faces.append(contentsOf: others)
        lastScores.removeAll(keepingCapacity: true)
        lastScores.append(contentsOf: otherScores)
        if let followed {
            faces.append(followed.box)
            lastScores.append(followed.score)
        }
    }

    /// The square around `face` that the next look covers, moved inside the image
    /// (and no bigger than its shorter side).
    static func neighbourhood(of face: Box, in image: GrayImage) -> Box {
        let limit = min(image.width, image.height)
        let side = min(max(Int((Double(max(face.width, face.height)) * neighbourhoodScale).rounded()), smallestNeighbourhood), limit)
        let center = face.center
        let x = min(max(Int((center.x - Double(side) / 2).rounded()), 0), image.width - side)
        let y = min(max(Int((center.y - Double(side) / 2).rounded()), 0), image.height - side)
        return Box(x: x, y: y, width: side, height: side)
    }

    private static func distance(_ a: Box, _ b: Box) -> Double {
        let (ax, ay) = a.center, (bx, by) = b.center
        return (ax - bx) * (ax - bx) + (ay - by) * (ay - by)
    }
}

/// How one detector's box for a face differs from another's, relative to the
/// box's size so that it holds as the face comes nearer or goes away.
public struct BoxCorrection: Sendable, Equatable {
    /// The centre's shift, in widths and heights of the box corrected.
    public var shiftX: Double, shiftY: Double
    /// The size's ratio.
    public var scaleX: Double, scaleY: Double

    /// The largest difference still taken for the same face drawn
    /// differently: beyond it the two boxes are not one face.
    static let largestShift = 0.25
    static let scaleRange = 0.7...1.4

    /// The correction that turns `box` into `target`; `nil` when they are too
    /// far apart to be the same face.
    public init?(from box: Box, to target: Box) {
        guard box.width > 0, box.height > 0 else { return nil }
        let (bx, by) = box.center, (tx, ty) = target.center
        shiftX = (tx - bx) / Double(box.width)
        shiftY = (ty - by) / Double(box.height)
        scaleX = Double(target.width) / Double(box.width)
        scaleY = Double(target.height) / Double(box.height)
        guard abs(shiftX) <= Self.largestShift, abs(shiftY) <= Self.largestShift,
            Self.scaleRange.contains(scaleX), Self.scaleRange.contains(scaleY)
        else { return nil }
    }

    /// This correction moved `weight` (0-1) of the way toward `other`.
    public func moved(toward other: BoxCorrection, by weight: Double) -> BoxCorrection {
        func blend(_ a: Double, _ b: Double) -> Double { a + (b - a) * weight }
        var result = self
        (result.shiftX, result.shiftY) = (blend(shiftX, other.shiftX), blend(shiftY, other.shiftY))
        (result.scaleX, result.scaleY) = (blend(scaleX, other.scaleX), blend(scaleY, other.scaleY))
        return result
    }

    /// `box` as the other detector would have drawn it.
    public func applied(to box: Box) -> Box {
        let width = Double(box.width) * scaleX, height = Double(box.height) * scaleY
        let (cx, cy) = box.center
        let x = cx + shiftX * Double(box.width) - width / 2, y = cy + shiftY * Double(box.height) - height / 2
        return Box(x: Int(x.rounded()), y: Int(y.rounded()), width: Int(width.rounded()), height: Int(height.rounded()))
    }
}
