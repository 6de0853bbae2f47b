import Geometry
import Imaging

/// How the inside of the mouth looks against the rest of the face, read from the
/// frame where the points are. Teeth show between the lips in most smiles; the
/// lips' outline alone tells a smile from a neutral face poorly on small or
/// soft faces (docs/guide/faces.md has the figures). In units of the face's own
/// spread of gray levels, so that they hold under any exposure.
public struct MouthAppearance: Sendable, Equatable {
    /// The inside of the lips' mean gray against the face's, in face standard deviations.
    public var brightness: Float
    /// The inside's spread of gray against the face's.
    public var contrast: Float
    /// The inside's brightest tenth (its 90th percentile) against the face's mean, in face standard deviations.
    public var highlights: Float

    public init(brightness: Float, contrast: Float, highlights: Float) {
        (self.brightness, self.contrast, self.highlights) = (brightness, contrast, highlights)
    }

    /// A closed, neutral mouth (the mean of the calibration set's neutral faces):
    /// for points with no picture behind them (hand-made faces in tests).
    public static let neutral = MouthAppearance(brightness: -0.41, contrast: 0.31, highlights: 0.03)

    /// The inner lips' outline, MediaPipe's numbering, around the mouth's opening.
    static let innerLips = [78, 191, 80, 81, 82, 13, 312, 311, 310, 415, 308, 324, 318, 402, 317, 14, 87, 178, 88, 95]
    /// The face's oval, forehead to chin and back.
    static let faceOval = [
        10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149, 150, 136,
        172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109,
    ]

    /// Reads `image` where `face`'s points lie; nil when the mouth's inside covers
    /// fewer than three pixels (a closed mouth on a small face) or the face has no spread.
    public init?(_ face: FaceLandmarks, in image: GrayImage) {
        var faceSum = 0.0, faceSquares = 0.0, faceCount = 0
        Self.forEachPixel(inside: Self.faceOval, of: face, in: image) { value in
            let v = Double(value)
            (faceSum, faceSquares, faceCount) = (faceSum + v, faceSquares + v * v, faceCount + 1)
        }
        guard faceCount > 0 else { return nil }
        let faceMean = faceSum / Double(faceCount)
        let faceSpread = (max(faceSquares / Double(faceCount) - faceMean * faceMean, 0)).squareRoot()
        guard faceSpread > 0.5 else { return nil }
        let read: MouthAppearance? = withUnsafeTemporaryAllocation(of: Int32.self, capacity: 256) { histogram in
            histogram.initialize(repeating: 0)
            var sum = 0.0, squares = 0.0, count = 0
            Self.forEachPixel(inside: Self.innerLips, of: face, in: image) { value in
                let v = Double(value)
                (sum, squares, count) = (sum + v, squares + v * v, count + 1)
                histogram[Int(value)] += 1
            }
            guard count >= 3 else { return nil }
            let mean = sum / Double(count)
            let spread = (max(squares / Double(count) - mean * mean, 0)).squareRoot()
            // The 90th percentile: the first gray level with nine tenths of the pixels at or below it.
            var seen = 0, level = 0
            while level < 255, Double(seen + Int(histogram[level])) < 0.9 * Double(count) {
                seen += Int(histogram[level])
                level += 1
            }
            return MouthAppearance(
                brightness: Float((mean - faceMean) / faceSpread), contrast: Float(spread / faceSpread),
                highlights: Float((Double(level) - faceMean) / faceSpread))
        }
        guard let read else { return nil }
        self = read
    }

    /// Calls `body` with the gray level of each pixel whose centre lies inside the
    /// polygon through `indices`' points (even-odd rule, row by row), within the image.
    static func forEachPixel(inside indices: [Int], of face: FaceLandmarks, in image: GrayImage, _ body: (UInt8) -> Void) {
        var low = Float.infinity, high = -Float.infinity
        for index in indices {
            low = min(low, face[index].y)
            high = max(high, face[index].y)
        }
        guard low.isFinite, high.isFinite else { return }
        let firstRow = max(Int((low - 0.5).rounded(.up)), 0), lastRow = min(Int((high - 0.5).rounded(.down)), image.height - 1)
        guard firstRow <= lastRow else { return }
        image.pixels.withUnsafeBufferPointer { pixels in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: indices.count) { crossings in
                for row in firstRow...lastRow {
                    let y = Float(row) + 0.5
                    var count = 0
                    for (k, index) in indices.enumerated() {
                        let a = face[index], b = face[indices[k + 1 == indices.count ? 0 : k + 1]]
                        if (a.y <= y) != (b.y <= y) {
                            crossings[count] = a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x)
                            count += 1
                        }
                    }
                    // Few crossings (two for a convex outline): an insertion sort.
                    for i in stride(from: 1, to: count, by: 1) {
                        var j = i
                        while j > 0, crossings[j - 1] > crossings[j] {
                            crossings.swapAt(j - 1, j)
                            j -= 1
                        }
                    }
                    for pair in stride(from: 0, to: count - 1, by: 2) {
                        let from = max(Int((crossings[pair] - 0.5).rounded(.up)), 0)
                        let to = min(Int((crossings[pair + 1] - 0.5).rounded(.down)), image.width - 1)
                        guard from <= to else { continue }
                        for column in from...to { body(pixels[row * image.width + column]) }
                    }
                }
            }
        }
    }
}
