#if canImport(Glibc)
    import Glibc
#endif
import Geometry
import Imaging
import MonotonicTime
import Video

/// A face photo and where the detector found the face in it: the head every
/// person on the range wears.
public struct FaceSprite: Sendable {
    public var image: GrayImage
    /// Its colour, if the photo has any: BlazeFace finds faces of 40 pixels
    /// in colour that it misses in gray, and a range's faces are that small.
    public var chroma: ChromaPlanes?
    public var box: Box

    public init(image: GrayImage, chroma: ChromaPlanes? = nil, box: Box) {
        precondition(box.width > 0 && box.height > 0)
        self.image = image
        self.chroma = chroma
        self.box = box
    }
}

/// The camera beside the turret on the range (`--camera range:SCENARIO[+SECONDS]:PHOTO`):
/// each frame draws the scenario's people where they are at its time. The
/// picture is `latency` seconds old when its frame is handed over, as a real
/// camera's is by the time its commands reach the wire (exposure, transfer,
/// detection), and says so in `capturedAt`: on the frame clock for the
/// simulated servo, or, `realtime` (a real board, or the firmware in
/// simavr), paced to the wall clock and stamped on the monotonic clock as a
/// camera's driver stamps its buffers. `paced` alone (`--realtime` on the
/// simulated servo) plays the frame clock at the wall clock's pace, to be
/// watched in the console; the stamps stay on the frame clock.
public final class RangeCamera: FrameSource {
    public let scenario: RangeScenario
    public let world: RangeWorld
    public let sprite: FaceSprite
    public let framesPerSecond: Double
    public let latency: Double
    public var width: Int { world.width }
    public var height: Int { world.height }
    public var name: String { "range:\(scenario.name)" }
    public var keepsColour = false
    public var hasColour: Bool { sprite.chroma != nil }
    public let realtime: Bool
    public let paced: Bool
    private let background: GrayImage
    private var index = 0
    private var started: Double?

    public init(
        scenario: RangeScenario, sprite: FaceSprite, world: RangeWorld = RangeWorld(), framesPerSecond: Double = 30, latency: Double = 0.1,
        realtime: Bool = false, paced: Bool = false
    ) {
        precondition(framesPerSecond > 0 && latency >= 0)
        self.scenario = scenario
        self.sprite = sprite
        self.world = world
        self.framesPerSecond = framesPerSecond
        self.latency = latency
        self.realtime = realtime
        self.paced = paced
        background = Self.room(width: world.width, height: world.height)
    }

    public func nextFrame() throws(VideoError) -> Frame? {
        let time = Double(index) / framesPerSecond
        guard time < scenario.duration else { return nil }
        defer { index += 1 }
        var capturedAt = time - latency
        if realtime || paced {
            let start = started ?? monotonicSeconds()
            started = start
            let wait = start + time - monotonicSeconds()
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            if realtime { capturedAt += start }
        }
        let picture = render(at: time - latency, colour: keepsColour)
        return Frame(image: picture.luma, timestamp: time, index: index, chroma: picture.chroma, capturedAt: capturedAt)
    }

    public func close() {}

    /// The picture of the range at `time`: the room, and its people, the
    /// farthest first; with `colour`, the faces' colour too (the rest is gray).
    public func render(at time: Double, colour: Bool = false) -> (luma: GrayImage, chroma: ChromaPlanes?) {
        var image = background
        var chroma = colour ? sprite.chroma.map { ChromaPlanes(layout: .full, lumaWidth: width, lumaHeight: height, range: $0.range) } : nil
        let places = scenario.people.map { $0.position(at: time) }.sorted { $0.z > $1.z }
        for place in places { draw(personAt: place, into: &image, chroma: &chroma) }
        return (image, chroma)
    }

    /// The face's box in the picture for a person at `place`.
    public func faceBox(at place: (x: Double, z: Double)) -> (centerX: Double, centerY: Double, width: Double) {
        let centre = world.pixel(angles: world.angles(x: place.x, y: world.faceHeight, z: place.z))
        let distance = (place.x * place.x + place.z * place.z).squareRoot()
        return (centre.x, centre.y, 2 * degrees(atan(world.faceWidth / 2 / distance)) * world.pixelsPerDegree)
    }

    private func draw(personAt place: (x: Double, z: Double), into image: inout GrayImage, chroma: inout ChromaPlanes?) {
        func pixel(_ x: Double, _ y: Double) -> (x: Double, y: Double) { world.pixel(angles: world.angles(x: x, y: y, z: place.z)) }
        let shoulder = world.faceHeight - world.shoulderDrop, hip = world.faceHeight - world.hipDrop
        // Trousers, a shirt, a neck, then the head over them.
        fill(&image, from: pixel(place.x - 0.16, hip), to: pixel(place.x + 0.16, 0), gray: 55)
        fill(&image, from: pixel(place.x - world.torsoHalfWidth, shoulder), to: pixel(place.x + world.torsoHalfWidth, hip), gray: 85)
        fill(&image, from: pixel(place.x - 0.05, world.faceHeight - 0.05), to: pixel(place.x + 0.05, shoulder), gray: 120)
        let face = faceBox(at: place)
        let scale = face.width / Double(sprite.box.width)
        let spriteCentre = sprite.box.center
        // The head: the photo inside an ellipse a little larger than the face's box (hair, chin).
        let halfWidth = 1.0 * face.width, halfHeight = 1.25 * face.width * Double(sprite.box.height) / Double(sprite.box.width)
        let top = max(Int((face.centerY - halfHeight).rounded(.down)), 0), bottom = min(Int((face.centerY + halfHeight).rounded(.up)), height - 1)
        let left = max(Int((face.centerX - halfWidth).rounded(.down)), 0), right = min(Int((face.centerX + halfWidth).rounded(.up)), width - 1)
        guard top <= bottom, left <= right else { return }
        let source = sprite.image
        let spriteChroma = sprite.chroma
        for row in top...bottom {
            for column in left...right {
                let dx = (Double(column) + 0.5 - face.centerX) / halfWidth, dy = (Double(row) + 0.5 - face.centerY) / halfHeight
                guard dx * dx + dy * dy <= 1 else { continue }
                let x = spriteCentre.x + (Double(column) + 0.5 - face.centerX) / scale - 0.5
                let y = spriteCentre.y + (Double(row) + 0.5 - face.centerY) / scale - 0.5
                let index = row * width + column
                image[column, row] = Self.sample(source.pixels, width: source.width, height: source.height, x: x, y: y)
                if chroma != nil, let spriteChroma {
                    // The sprite's planes are at their own sampling; scale the position to them.
                    let shifts = spriteChroma.layout.shifts
                    let cx = (x + 0.5) / Double(1 << shifts.x) - 0.5, cy = (y + 0.5) / Double(1 << shifts.y) - 0.5
                    chroma!.u[index] = Self.sample(spriteChroma.u, width: spriteChroma.width, height: spriteChroma.height, x: cx, y: cy)
                    chroma!.v[index] = Self.sample(spriteChroma.v, width: spriteChroma.width, height: spriteChroma.height, x: cx, y: cy)
                }
            }
        }
    }

    private func fill(_ image: inout GrayImage, from a: (x: Double, y: Double), to b: (x: Double, y: Double), gray: UInt8) {
        let left = max(Int(min(a.x, b.x).rounded()), 0), right = min(Int(max(a.x, b.x).rounded()), width)
        let top = max(Int(min(a.y, b.y).rounded()), 0), bottom = min(Int(max(a.y, b.y).rounded()), height)
        guard left < right, top < bottom else { return }
        let width = self.width
        image.withUnsafeMutablePixels { out in
            for row in top..<bottom { for column in left..<right { out[row * width + column] = gray } }
        }
    }

    private static func sample(_ pixels: [UInt8], width: Int, height: Int, x: Double, y: Double) -> UInt8 {
        let x0 = Int(x.rounded(.down)), y0 = Int(y.rounded(.down))
        let fx = x - Double(x0), fy = y - Double(y0)
        func at(_ x: Int, _ y: Int) -> Double { Double(pixels[min(max(y, 0), height - 1) * width + min(max(x, 0), width - 1)]) }
        let top = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx
        let bottom = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx
        return UInt8(min(max(top * (1 - fy) + bottom * fy, 0), 255).rounded())
    }

    /// A plain room: a lit wall fading toward the corners, a darker floor
    /// from the turret's horizon down, a door and a picture on the wall.
    static func room(width: Int, height: Int) -> GrayImage {
        var image = GrayImage(width: width, height: height)
        image.withUnsafeMutablePixels { out in
            for row in 0..<height {
                for column in 0..<width {
                    let dx = Double(column - width / 2) / Double(width), dy = Double(row - height / 2) / Double(height)
                    var gray = 200 - 60 * (dx * dx + dy * dy)
                    if row > height * 3 / 4 { gray = 120 }
                    if column > width / 10, column < width / 5, row > height / 6, row <= height * 3 / 4 { gray = 150 }
                    if column > width * 7 / 10, column < width * 17 / 20, row > height / 8, row < height / 3 { gray = 95 }
                    out[row * width + column] = UInt8(gray)
                }
            }
        }
        return image
    }
}

extension RangeWorld {
    /// The picture's pixel for a pair of servo angles.
    func pixel(angles: (pan: Double, tilt: Double)) -> (x: Double, y: Double) { pixel(pan: angles.pan, tilt: angles.tilt) }
}
