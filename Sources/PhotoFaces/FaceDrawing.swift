import Expressions
import FaceMesh
import FoundationEssentials
import Glibc
import Geometry
import Imaging
import Video

/// `sentry faces --draw`: the photo with what was read drawn over it, for a
/// person who would rather look than read: the mesh's points (green), the
/// eyes' contours (cyan), the irises (yellow rings), the head's axes from the
/// nose (red across, green up, blue toward the camera) and the states above
/// the box (white).
public enum FaceDrawing {
    /// Writes `DIR/<name>.png` for the image the report came from.
    public static func write(_ report: FaceReader.Report, over image: GrayImage, into directory: String) throws {
        var canvas = Canvas(image)
        for face in report.faces { canvas.draw(face) }
        let name = URL(fileURLWithPath: report.file).deletingPathExtension().lastPathComponent + ".png"
        try PNGWriting.write(rgb: canvas.pixels, width: canvas.width, height: canvas.height, to: directory + "/" + name)
    }
}

/// An RGB picture to draw on, starting from a gray one.
struct Canvas {
    typealias Colour = SIMD3<UInt8>
    static let green = Colour(0, 230, 0), cyan = Colour(0, 220, 255), yellow = Colour(255, 220, 0)
    static let red = Colour(255, 40, 40), blue = Colour(60, 90, 255), white = Colour(255, 255, 255)

    let width: Int
    let height: Int
    var pixels: [UInt8]

    init(_ image: GrayImage) {
        (width, height) = (image.width, image.height)
        pixels = image.pixels.flatMap { [$0, $0, $0] }
    }

    mutating func draw(_ face: FaceReader.Face) {
        let points = face.points
        for point in points.points.prefix(468) { dot(SIMD2(point.x, point.y), Self.green) }
        for eye in FaceMesh.eyeOutlines {
            for index in eye { dot(points.position(index), Self.cyan, radius: 1) }
        }
        for iris in [FaceLandmarks.Landmark.rightIris, FaceLandmarks.Landmark.leftIris] {
            let center = points.position(iris)
            let radius = (1...4).map { length(points.position(iris + $0) - center) }.reduce(0, +) / 4
            ring(center, radius: max(radius, 1.5), Self.yellow)
        }
        let frame = FaceFrame(points)
        let nose = points.position(FaceLandmarks.Landmark.noseTip)
        for (axis, colour) in [(frame.across, Self.red), (-frame.up, Self.green), (frame.forward, Self.blue)] {
            line(nose, nose + SIMD2(axis.x, axis.y) * frame.size * 0.8, colour)
        }
        let label = face.states.isEmpty ? "neutral" : face.states.joined(separator: " ")
        text(label.uppercased(), at: SIMD2(face.box[0], face.box[1] - 18), scale: 2, Self.white)
    }

    mutating func set(_ x: Int, _ y: Int, _ colour: Colour) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let index = (y * width + x) * 3
        (pixels[index], pixels[index + 1], pixels[index + 2]) = (colour.x, colour.y, colour.z)
    }

    mutating func dot(_ point: SIMD2<Float>, _ colour: Colour, radius: Int = 0) {
        let (x, y) = (Int(point.x.rounded()), Int(point.y.rounded()))
        for dy in -radius...radius { for dx in -radius...radius { set(x + dx, y + dy, colour) } }
    }

    mutating func line(_ from: SIMD2<Float>, _ to: SIMD2<Float>, _ colour: Colour) {
        let steps = max(Int(max(abs(to.x - from.x), abs(to.y - from.y)).rounded(.up)), 1)
        for step in 0...steps { dot(from + (to - from) * Float(step) / Float(steps), colour, radius: 1) }
    }

    mutating func ring(_ center: SIMD2<Float>, radius: Float, _ colour: Colour) {
        let steps = max(Int(radius * 8), 16)
        for step in 0..<steps {
            let angle = Float(step) / Float(steps) * 2 * .pi
            dot(center + SIMD2(cos(angle), sin(angle)) * radius, colour)
        }
    }

    /// Capital letters, digits' worth of nothing: the states' letters in a 5x7 font.
    mutating func text(_ string: String, at origin: SIMD2<Float>, scale: Int, _ colour: Colour) {
        var x = Int(origin.x), y = max(Int(origin.y), 0)
        if y + 7 * scale > height { y = max(height - 7 * scale, 0) }
        for character in string {
            if let rows = Self.font[character] {
                for (row, bits) in rows.enumerated() {
                    for column in 0..<5 where bits & (0b10000 >> column) != 0 {
                        for sy in 0..<scale { for sx in 0..<scale { set(x + column * scale + sx, y + row * scale + sy, colour) } }
                    }
                }
            }
            x += 6 * scale
        }
    }

    static let font: [Character: [UInt8]] = [
        "A": [14, 17, 17, 31, 17, 17, 17], "B": [30, 17, 17, 30, 17, 17, 30], "E": [31, 16, 16, 30, 16, 16, 31],
        "F": [31, 16, 16, 30, 16, 16, 16], "G": [14, 17, 16, 23, 17, 17, 15], "H": [17, 17, 17, 31, 17, 17, 17],
        "I": [14, 4, 4, 4, 4, 4, 14], "K": [17, 18, 20, 24, 20, 18, 17], "L": [16, 16, 16, 16, 16, 16, 31],
        "M": [17, 27, 21, 21, 17, 17, 17], "N": [17, 17, 25, 21, 19, 17, 17], "O": [14, 17, 17, 17, 17, 17, 14],
        "P": [30, 17, 17, 30, 16, 16, 16], "R": [30, 17, 17, 30, 20, 18, 17], "S": [15, 16, 16, 14, 1, 1, 30],
        "T": [31, 4, 4, 4, 4, 4, 4], "U": [17, 17, 17, 17, 17, 17, 14], "W": [17, 17, 17, 21, 21, 21, 10],
        "-": [0, 0, 0, 31, 0, 0, 0],
    ]
}

private func length(_ vector: SIMD2<Float>) -> Float { (vector * vector).sum().squareRoot() }
