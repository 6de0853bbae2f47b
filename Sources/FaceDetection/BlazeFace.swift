import FoundationEssentials
import Glibc
import Geometry
import Imaging
import Letterboxing
import MonotonicTime
import ProcessorFeatures
import TFLite

/// A face with its detector score; coordinates in frame pixels.
public struct ScoredFace: Sendable, Equatable {
    public var x: Float
    public var y: Float
    public var width: Float
    public var height: Float
    public var score: Float
    /// The eyes' centres (BlazeFace's first two keypoints): the subject's right
    /// eye, on the image's left for a camera that does not mirror, and the left
    /// one. They give the face's roll, which the face mesh's crop needs.
    public var rightEye: SIMD2<Float>
    public var leftEye: SIMD2<Float>

    public init(
        x: Float, y: Float, width: Float, height: Float, score: Float,
        rightEye: SIMD2<Float> = .zero, leftEye: SIMD2<Float> = .zero
    ) {
        (self.x, self.y, self.width, self.height, self.score) = (x, y, width, height, score)
        (self.rightEye, self.leftEye) = (rightEye, leftEye)
    }

    /// The box rounded to whole pixels.
    public var box: Box {
        let left = x.rounded(), top = y.rounded()
        return Box(x: Int(left), y: Int(top), width: Int((x + width).rounded() - left), height: Int((y + height).rounded() - top))
    }
}

/// Google's BlazeFace face detector (MediaPipe's short- and full-range
/// models) on sentry's own TFLite interpreter: letterbox the frame to the
/// model input, run the network, decode the boxes from SSD anchors, merge
/// overlapping ones with weighted non-maximum suppression, and undo the
/// letterbox. A colour frame is fed as its RGB; a gray one as three equal
/// channels (or one, for a detector made for gray frames only: see `init`).
public final class BlazeFaceDetector: RegionFaceDetector {
    /// The two published models, told apart by their input size.
    public enum Variant: String, Sendable, CaseIterable {
        /// 192x192, faces up to about 5 m away.
        case fullRange = "blazeface"
        /// 128x128, faces within about 2 m.
        case shortRange = "blazeface-short"

        /// The side of the model's square input, in pixels.
        public var inputSize: Int { self == .fullRange ? 192 : 128 }

        /// SSD anchor layers (MediaPipe's face_detection_*_range_common.pbtxt): a stride and
        /// how many anchors each cell of that layer has.
        var anchorLayers: [(stride: Int, perCell: Int)] {
            switch self {
            case .fullRange: [(4, 1)]
            case .shortRange: [(8, 2), (16, 6)]
            }
        }
    }

    /// MediaPipe's default minimum score for both models.
    public static let defaultMinScore: Float = 0.5
    /// MediaPipe's overlap above which boxes are merged.
    static let suppressionThreshold: Float = 0.3

    public let variant: Variant
    /// The model file this detector runs.
    public let modelPath: String
    /// Boxes scoring below this are dropped (0...1).
    public var minScore: Float
    /// How long the network itself took on the last frame, for benchmarks.
    public private(set) var lastNetworkSeconds: Double = 0
    /// The letterbox (frame to input tensor) and the decoding with NMS, on the last frame.
    public private(set) var lastLetterboxSeconds: Double = 0
    public private(set) var lastDecodeSeconds: Double = 0
    /// False for a detector made for gray frames only.
    public let readsColour: Bool
    /// Bytes the interpreter holds for weights and activations.
    public var memoryBytes: Int { interpreter.memoryBytes }

    private let interpreter: Interpreter
    private let regressorOutput: Int
    private let scoreOutput: Int
    private var letterbox: Letterbox
    private let anchors: [SIMD2<Float>]
    /// Per-frame scratch, kept between frames so that steady state allocates nothing.
    private var candidates: [Candidate] = []
    private var remaining: [Candidate] = []
    private var kept: [Candidate] = []
    private var scoredFaces: [ScoredFace] = []
    public private(set) var lastScores: [Float] = []

    /// A decoded box in letterbox coordinates (0...1).
    private struct Candidate {
        var minX, minY, maxX, maxY, score: Float
        /// The two eye keypoints, x0 y0 x1 y1.
        var eyes: SIMD4<Float>
        var area: Float { (maxX - minX) * (maxY - minY) }

        func overlap(_ other: Candidate) -> Float {
            let left = max(minX, other.minX), right = min(maxX, other.maxX)
            let top = max(minY, other.minY), bottom = min(maxY, other.maxY)
            guard left < right, top < bottom else { return 0 }
            let intersection = (right - left) * (bottom - top)
            let union = area + other.area - intersection
            return union > 0 ? intersection / union : 0
        }
    }

    /// Loads a BlazeFace `.tflite` model; the variant follows from its input size.
    /// `threads` shares each convolution's rows between that many threads. With
    /// `colour` false the detector is for gray frames only (their colour is never
    /// read): its first layer is folded to one channel, a little faster.
    public init(modelPath: String, minScore: Float = BlazeFaceDetector.defaultMinScore, threads: Int = 1, colour: Bool = true)
        throws(ModelError)
    {
        guard Self.cpuHasVectorUnit else {
            throw ModelError(path: modelPath, reason: "this CPU lacks AVX2/FMA, which sentry's BlazeFace needs; use --detector haar")
        }
        let model = try TFLiteModel.load(path: modelPath)
        // Gray frames only: the first layer is summed over the colour channels once, here.
        interpreter = try Interpreter(model: model, path: modelPath, threads: threads, identicalInputChannels: !colour)
        let shape = interpreter.inputShape
        guard shape.count == 4, shape[1] == shape[2], shape[3] == 1 || shape[3] == 3,
            let variant = Variant.allCases.first(where: { $0.inputSize == shape[1] })
        else {
            throw ModelError(path: modelPath, reason: "input \(shape) is not a BlazeFace input (1x128x128x3 or 1x192x192x3)")
        }
        self.variant = variant
        self.modelPath = modelPath
        readsColour = shape[3] == 3
        self.minScore = minScore
        anchors = Self.anchors(for: variant)
        let shapes = interpreter.outputShapes
        guard shapes.count == 2, let regressors = shapes.firstIndex(where: { $0.last == 16 }),
            let scores = shapes.firstIndex(where: { $0.last == 1 }),
            shapes[regressors].dropLast().reduce(1, *) == anchors.count,
            shapes[scores].dropLast().reduce(1, *) == anchors.count
        else {
            throw ModelError(path: modelPath, reason: "outputs \(shapes) do not match BlazeFace's \(anchors.count) anchors")
        }
        (regressorOutput, scoreOutput) = (regressors, scores)
        letterbox = Letterbox(size: variant.inputSize, channels: shape[3])
        candidates.reserveCapacity(anchors.count)
        remaining.reserveCapacity(anchors.count)
        kept.reserveCapacity(anchors.count)
    }

    public func detectFaces(in image: GrayImage, into boxes: inout [Box]) {
        detect(in: image, into: &scoredFaces)
        split(into: &boxes)
    }

    public func detectFaces(in image: GrayImage, colour: ChromaPlanes?, at time: Double, into boxes: inout [Box]) {
        detect(in: image, colour: colour, into: &scoredFaces)
        split(into: &boxes)
    }

    public func detectFaces(in image: GrayImage, region: Box, into boxes: inout [Box]) {
        detect(in: image, region: region, into: &scoredFaces)
        split(into: &boxes)
    }

    public func detectFaces(in image: GrayImage, colour: ChromaPlanes?, region: Box, into boxes: inout [Box]) {
        detect(in: image, colour: colour, region: region, into: &scoredFaces)
        split(into: &boxes)
    }

    /// The last faces as boxes, and their scores into `lastScores`.
    private func split(into boxes: inout [Box]) {
        boxes.removeAll(keepingCapacity: true)
        lastScores.removeAll(keepingCapacity: true)
        for face in scoredFaces {
            boxes.append(face.box)
            lastScores.append(face.score)
        }
    }

    /// The network alone, `runs` times back to back on `image` letterboxed once,
    /// in seconds per run: timed the way LiteRT's reference times its interpreter
    /// (`sentry bench` compares the two).
    public func backToBackNetworkSeconds(on image: GrayImage, runs: Int) -> [Double] {
        letterbox.fill(interpreter.input, from: image)
        return interpreter.runSeconds(runs: runs)
    }

    /// Each step of the network on `image`, the fastest of `runs` (`sentry bench --profile`).
    public func stepTimings(on image: GrayImage, runs: Int) -> [Interpreter.StepTiming] {
        letterbox.fill(interpreter.input, from: image)
        return interpreter.stepTimings(runs: runs)
    }

    /// The faces in `image` (or in `region` of it, as boxes in the whole
    /// image's pixels) with their scores, best first, written into `faces`
    /// (emptied first; its storage is reused, so steady state allocates nothing).
    /// In colour with the frame's `colour`, unless the detector is for gray frames only.
    public func detect(in image: GrayImage, colour: ChromaPlanes? = nil, region: Box? = nil, into faces: inout [ScoredFace]) {
        faces.removeAll(keepingCapacity: true)
        guard image.width > 0, image.height > 0 else { return }
        let area = region ?? Box(x: 0, y: 0, width: image.width, height: image.height)
        let start = monotonicSeconds()
        letterbox.fill(
            interpreter.input, from: image, chroma: colour,
            region: Letterbox.Region(x: area.x, y: area.y, width: area.width, height: area.height))
        let filled = monotonicSeconds()
        interpreter.invoke()
        let invoked = monotonicSeconds()
        decode()
        suppress()
        lastNetworkSeconds = invoked - filled
        lastLetterboxSeconds = filled - start
        lastDecodeSeconds = monotonicSeconds() - invoked
        // Undo the letterbox: fractions of the padded square to the region's pixels, then the image's.
        let padX = Float(letterbox.padX), padY = Float(letterbox.padY)
        let scaleX = 1 - 2 * padX, scaleY = 1 - 2 * padY
        let width = Float(area.width), height = Float(area.height)
        let left = Float(area.x), top = Float(area.y)
        for face in kept {
            let minX = (face.minX - padX) / scaleX * width + left, maxX = (face.maxX - padX) / scaleX * width + left
            let minY = (face.minY - padY) / scaleY * height + top, maxY = (face.maxY - padY) / scaleY * height + top
            let eyes =
                (face.eyes - SIMD4(padX, padY, padX, padY)) / SIMD4(scaleX, scaleY, scaleX, scaleY)
                * SIMD4(width, height, width, height) + SIMD4(left, top, left, top)
            faces.append(
                ScoredFace(
                    x: minX, y: minY, width: maxX - minX, height: maxY - minY, score: face.score,
                    rightEye: SIMD2(eyes[0], eyes[1]), leftEye: SIMD2(eyes[2], eyes[3])))
        }
    }

    /// Boxes from anchors whose score passes `minScore` (MediaPipe's
    /// TensorsToDetections with fixed-size anchors: offsets are in input pixels).
    private func decode() {
        candidates.removeAll(keepingCapacity: true)
        let regressors = interpreter.output(regressorOutput), scores = interpreter.output(scoreOutput)
        let size = Float(variant.inputSize)
        // sigmoid(x) > minScore  <=>  x > logit(minScore); raw scores are clipped to ±80 first.
        let clippedMin = min(max(minScore, 1e-6), 1 - 1e-6)
        let threshold = log(clippedMin / (1 - clippedMin))
        for anchor in anchors.indices {
            let logit = min(max(scores[anchor], -80), 80)
            guard logit > threshold else { continue }
            let raw = regressors.baseAddress! + anchor * 16
            let centerX = raw[0] / size + anchors[anchor].x, centerY = raw[1] / size + anchors[anchor].y
            let halfWidth = raw[2] / size / 2, halfHeight = raw[3] / size / 2
            guard halfWidth > 0, halfHeight > 0 else { continue }
            let score = 1 / (1 + exp(-logit))
            let anchor4 = SIMD4(anchors[anchor].x, anchors[anchor].y, anchors[anchor].x, anchors[anchor].y)
            let eyes = SIMD4(raw[4], raw[5], raw[6], raw[7]) / size + anchor4
            candidates.append(
                Candidate(
                    minX: centerX - halfWidth, minY: centerY - halfHeight,
                    maxX: centerX + halfWidth, maxY: centerY + halfHeight, score: score, eyes: eyes))
        }
    }

    /// MediaPipe's weighted non-maximum suppression: the best box absorbs every box
    /// overlapping it by more than the threshold, its corners the score-weighted mean.
    private func suppress() {
        kept.removeAll(keepingCapacity: true)
        // Insertion sort by score, best first (few candidates; no allocation).
        for index in candidates.indices.dropFirst() {
            let candidate = candidates[index]
            var position = index
            while position > 0, candidates[position - 1].score < candidate.score {
                candidates[position] = candidates[position - 1]
                position -= 1
            }
            candidates[position] = candidate
        }
        while let best = candidates.first {
            remaining.removeAll(keepingCapacity: true)
            var total: Float = 0
            var merged = Candidate(minX: 0, minY: 0, maxX: 0, maxY: 0, score: best.score, eyes: .zero)
            for candidate in candidates {
                if candidate.overlap(best) > Self.suppressionThreshold {
                    total += candidate.score
                    merged.minX += candidate.minX * candidate.score
                    merged.minY += candidate.minY * candidate.score
                    merged.maxX += candidate.maxX * candidate.score
                    merged.maxY += candidate.maxY * candidate.score
                    merged.eyes += candidate.eyes * candidate.score
                } else {
                    remaining.append(candidate)
                }
            }
            if total > 0 {
                merged.minX /= total
                merged.minY /= total
                merged.maxX /= total
                merged.maxY /= total
                merged.eyes /= total
                kept.append(merged)
            } else {
                kept.append(best)
            }
            if remaining.count == candidates.count { break }
            swap(&candidates, &remaining)
        }
    }

    /// Anchor centres in input fractions, in the order of the model's outputs
    /// (MediaPipe's SsdAnchorsCalculator with fixed-size anchors).
    static func anchors(for variant: Variant) -> [SIMD2<Float>] {
        var anchors: [SIMD2<Float>] = []
        for layer in variant.anchorLayers {
            let cells = variant.inputSize / layer.stride
            for y in 0..<cells {
                for x in 0..<cells {
                    let center = SIMD2<Float>((Float(x) + 0.5) / Float(cells), (Float(y) + 0.5) / Float(cells))
                    anchors.append(contentsOf: repeatElement(center, count: layer.perCell))
                }
            }
        }
        return anchors
    }

    /// Whether this CPU can run the interpreter's kernels (built for AVX2 and FMA on x86-64).
    public static let cpuHasVectorUnit: Bool = Processor.current?.kernels != nil
}
