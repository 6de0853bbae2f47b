import FoundationEssentials
import Geometry
import Imaging
import JPEG
import Synchronization
import Threading
import Video

/// An event's pictures as JPEG: the whole frame, and the face with a margin
/// (`faceCrop`), for the events folder, a hook and MQTT alike; and a frame
/// saved as a still of the scene (JPEG or PNG).
public enum EventPicture {
    /// The frame, or the part of it `crop` names, as JPEG bytes.
    public static func jpeg(of frame: Frame, crop: Box?, with encoder: JPEGEncoder) throws -> [UInt8] {
        let area = crop ?? Box(x: 0, y: 0, width: frame.image.width, height: frame.image.height)
        let chroma = YUVPicture.chroma(of: frame.chroma?.layout)
        var picture = YUVPicture(width: area.width, height: area.height, chroma: chroma)
        let width = frame.image.width
        for row in 0..<area.height {
            let from = (area.y + row) * width + area.x
            picture.y.replaceSubrange(row * area.width..<(row + 1) * area.width, with: frame.image.pixels[from..<from + area.width])
        }
        if let planes = frame.chroma {
            let (shiftX, shiftY) = planes.layout.shifts
            let planeWidth = (width + (1 << shiftX) - 1) >> shiftX
            let size = YUVPicture.chromaSize(width: area.width, height: area.height, chroma)
            for row in 0..<size.height {
                let from = ((area.y >> shiftY) + row) * planeWidth + (area.x >> shiftX)
                let to = row * size.width
                picture.u.replaceSubrange(to..<to + size.width, with: planes.u[from..<from + size.width])
                picture.v.replaceSubrange(to..<to + size.width, with: planes.v[from..<from + size.width])
            }
        }
        return try encoder.encode(picture) { Array($0) }
    }

    /// The frame as R'G'B' triples, rows top to bottom: its colour where it has any, else gray.
    public static func rgb(of frame: Frame) -> [UInt8] {
        let (width, height) = (frame.image.width, frame.image.height)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        guard let planes = frame.chroma else {
            for (index, luma) in frame.image.pixels.enumerated() { (pixels[3 * index], pixels[3 * index + 1], pixels[3 * index + 2]) = (luma, luma, luma) }
            return pixels
        }
        let conversion = RGBConversion(planes.range)
        let (shiftX, shiftY) = planes.layout.shifts
        for row in 0..<height {
            for column in 0..<width {
                let chroma = (row >> shiftY) * planes.width + (column >> shiftX), index = row * width + column
                let (red, green, blue) = conversion.rgb(y: frame.image.pixels[index], cb: planes.u[chroma], cr: planes.v[chroma])
                (pixels[3 * index], pixels[3 * index + 1], pixels[3 * index + 2]) = (red, green, blue)
            }
        }
        return pixels
    }

    /// The names `save` takes: the picture's format by its extension.
    public static let fileExtensions = ["jpg", "jpeg", "png"]

    /// Writes the frame to `path`, a JPEG or a PNG by its name (`sentry capture --save`).
    public static func save(_ frame: Frame, to path: String) throws {
        if path.lowercased().hasSuffix(".png") {
            try PNGWriting.write(rgb: rgb(of: frame), width: frame.image.width, height: frame.image.height, to: path)
            return
        }
        let bytes = try jpeg(of: frame, crop: nil, with: JPEGEncoder(quality: 92))
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw VideoError(source: path, reason: "cannot be written", hint: "check the folder exists and is writable")
        }
    }
}

/// The part of the frame a face picture shows: the box with a margin of half
/// its size on every side, at least `minimumSide` pixels on its long side
/// where the frame is that large, inside the frame, on even pixels (so that
/// 4:2:0 colour crops cleanly).
public func faceCrop(around box: Box, frameWidth: Int, frameHeight: Int, minimumSide: Int = 128) -> Box {
    let centreX = box.x + box.width / 2, centreY = box.y + box.height / 2
    var width = max(2 * box.width, minimumSide), height = max(2 * box.height, minimumSide)
    width = min(width, frameWidth) & ~1
    height = min(height, frameHeight) & ~1
    let x = min(max(0, centreX - width / 2), frameWidth - width) & ~1
    let y = min(max(0, centreY - height / 2), frameHeight - height) & ~1
    return Box(x: x, y: y, width: width, height: height)
}

/// The face of the newest event, encoded on a thread of its own: what MQTT's
/// picture shows when no `--events` folder encodes it already. Newest wins:
/// a face still waiting is replaced, nothing queues, the frame loop never waits.
public final class FacePictures: Sendable {
    private struct Slot {
        var waiting: (face: Box, frame: Frame)?
        var stopped = false
    }

    private let slot = Mutex(Slot())
    private let condition = Condition()

    /// `encoded`: each face's JPEG, on the encoder's thread.
    public init(encoded: @escaping @Sendable ([UInt8]) -> Void) {
        startThread(named: "sentry-faces") { [self] in
            guard let encoder = try? JPEGEncoder(quality: 85) else { return }
            while let (face, frame) = next() {
                let crop = faceCrop(around: face, frameWidth: frame.image.width, frameHeight: frame.image.height)
                if let jpeg = try? EventPicture.jpeg(of: frame, crop: crop, with: encoder) { encoded(jpeg) }
            }
        }
    }

    /// Hands the event's frame and its face's box over; returns at once.
    public func submit(face: Box, frame: Frame) {
        slot.withLock { $0.waiting = (face, frame) }
        condition.withLock { condition.signal() }
    }

    /// Ends the thread (a face still waiting is not encoded).
    public func stop() {
        slot.withLock { $0.stopped = true }
        condition.withLock { condition.signal() }
    }

    /// The next face to encode; nil once stopped.
    private func next() -> (face: Box, frame: Frame)? {
        while true {
            let (taken, stopped) = slot.withLock { slot in
                defer { slot.waiting = nil }
                return (slot.waiting, slot.stopped)
            }
            if stopped { return nil }
            if let taken { return taken }
            condition.withLock { if slot.withLock({ $0.waiting == nil && !$0.stopped }) { condition.wait(seconds: 1) } }
        }
    }
}
