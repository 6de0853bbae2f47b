import Geometry
import Imaging

/// The 150x150 chip dlib's ResNet reads, cut from a picture as dlib cuts it
/// (get_face_chip_details with padding 0.25, then extract_image_chip): the
/// similarity transform that best lays a face's five points (the corners of
/// both eyes and the base of the nose) on dlib's mean face, sampled
/// bilinearly. The network was trained on chips made this way: a chip cut
/// otherwise moves the embedding.
public struct FaceChip: Sendable {
    public static let size = DlibResNet.inputSize
    /// The margin around the mean face, as a share of its size.
    public static let padding = 0.25

    /// dlib's mean face for its five points, in a unit square: the subject's
    /// left eye's outer and inner corners, the right eye's outer and inner
    /// corners, the base of the nose.
    static let meanFace: [SIMD2<Double>] = [
        SIMD2(0.8595674595992, 0.2134981538014), SIMD2(0.6460604764104, 0.2289674387677),
        SIMD2(0.1205750620789, 0.2137274526848), SIMD2(0.3340850613712, 0.2290642403242),
        SIMD2(0.4901123135679, 0.6277975316475),
    ]

    /// The picture point chip pixel (0, 0) samples, and the steps one pixel right and one down take.
    public let origin: SIMD2<Double>
    public let right: SIMD2<Double>
    public let down: SIMD2<Double>

    /// How many times smaller than the picture's the chip's pixels are (above 2, dlib samples a smaller copy).
    public var scale: Double { (right * right).sum().squareRoot() }

    /// The chip for a face's five points, in dlib's order (see `meanFace`), in picture pixels.
    public init(fivePoints points: [SIMD2<Double>]) {
        precondition(points.count == 5, "dlib's chip is placed by five points")
        let size = Double(Self.size)
        let template = Self.meanFace.map { (Self.padding + $0) / (2 * Self.padding + 1) * size }
        // The least-squares similarity from the template to the points (Umeyama's, without a reflection, which faces never need).
        let meanFrom = template.reduce(.zero, +) / 5, meanTo = points.reduce(.zero, +) / 5
        var dot = 0.0, cross = 0.0, spread = 0.0
        for (from, to) in zip(template, points) {
            let a = from - meanFrom, b = to - meanTo
            dot += (a * b).sum()
            cross += a.x * b.y - a.y * b.x
            spread += (a * a).sum()
        }
        let (cosine, sine) = (dot / spread, cross / spread)
        func transform(_ p: SIMD2<Double>) -> SIMD2<Double> {
            SIMD2(cosine * p.x - sine * p.y, sine * p.x + cosine * p.y) + meanTo - SIMD2(cosine * meanFrom.x - sine * meanFrom.y, sine * meanFrom.x + cosine * meanFrom.y)
        }
        // dlib's chip_details: a rectangle of size × scale centred where the chip's centre lands, turned by the angle;
        // its corners (a drectangle spans width - 1) are where the chip's corner pixels sample.
        let scale = (cosine * cosine + sine * sine).squareRoot()
        let centre = transform(SIMD2(size / 2, size / 2))
        let half = (size * scale - 1) / 2
        let (unitX, unitY) = (SIMD2(cosine, sine) / scale, SIMD2(-sine, cosine) / scale)
        let step = (size * scale - 1) / (size - 1)
        origin = centre - half * unitX - half * unitY
        right = step * unitX
        down = step * unitY
    }

    /// The chip for a face the mesh has read: dlib's five points are the mesh's eye corners and the
    /// point under the nose (164, where the upper lip begins, is where dlib's fifth point falls:
    /// on the tests' photos its chips' embeddings lie 0.04 to 0.10 from dlib's own, 0.08 to 0.13 with
    /// point 2, the nose's base; docs/PERFORMANCE.md).
    public init(landmarks: FaceLandmarks) {
        let indices = [FaceLandmarks.Landmark.leftEyeOuter, FaceLandmarks.Landmark.leftEyeInner, FaceLandmarks.Landmark.rightEyeOuter,
                       FaceLandmarks.Landmark.rightEyeInner, 164]
        self.init(fivePoints: indices.map { SIMD2<Double>(landmarks.position($0)) })
    }

    /// The chip from a picture's luma, and its chroma when it has colour (a gray picture gives a gray chip).
    public func extract(from image: GrayImage, colour: ChromaPlanes?) -> [UInt8] {
        guard let chroma = colour else {
            return extract(width: image.width, height: image.height) { x, y in SIMD3(repeating: image.pixels[y * image.width + x]) }
        }
        let conversion = RGBConversion(chroma.range)
        let (shiftX, shiftY) = chroma.layout.shifts
        let chromaWidth = chroma.width
        return extract(width: image.width, height: image.height) { x, y in
            let at = (y >> shiftY) * chromaWidth + (x >> shiftX)
            let rgb = conversion.rgb(y: image.pixels[y * image.width + x], cb: chroma.u[at], cr: chroma.v[at])
            return SIMD3(rgb.red, rgb.green, rgb.blue)
        }
    }

    /// The chip's RGB, row by row, from a picture `width` x `height` whose pixel at (x, y) `pixel` gives.
    /// Samples outside the picture are black, as dlib leaves them.
    public func extract(width: Int, height: Int, pixel: (Int, Int) -> SIMD3<UInt8>) -> [UInt8] {
        var chip = [UInt8](repeating: 0, count: Self.size * Self.size * 3)
        for y in 0..<Self.size {
            for x in 0..<Self.size {
                let point = origin + Double(x) * right + Double(y) * down
                let left = Int((point.x).rounded(.down)), top = Int((point.y).rounded(.down))
                guard left >= 0, top >= 0, left + 1 < width, top + 1 < height else { continue }
                let (fx, fy) = (point.x - Double(left), point.y - Double(top))
                let topLeft = SIMD3<Double>(pixel(left, top)), topRight = SIMD3<Double>(pixel(left + 1, top))
                let bottomLeft = SIMD3<Double>(pixel(left, top + 1)), bottomRight = SIMD3<Double>(pixel(left + 1, top + 1))
                let value = (1 - fy) * ((1 - fx) * topLeft + fx * topRight) + fy * ((1 - fx) * bottomLeft + fx * bottomRight)
                let at = 3 * (y * Self.size + x)
                // dlib converts the double to its byte by truncation.
                chip[at] = UInt8(value.x)
                chip[at + 1] = UInt8(value.y)
                chip[at + 2] = UInt8(value.z)
            }
        }
        return chip
    }
}

extension SIMD3 where Scalar == Double {
    init(_ bytes: SIMD3<UInt8>) { self.init(Double(bytes.x), Double(bytes.y), Double(bytes.z)) }
}
