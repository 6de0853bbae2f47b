import Geometry
import MiniXML

/// Human-labelled face boxes for a folder of images, as read by `sentry eval`.
///
/// Two formats, told apart by the first non-blank character:
/// - dlib's imglab XML (`<` first): `<image file='a.jpg'><box top='..' left='..'
///   width='..' height='..'/></image>`; a box with `ignore='1'` may be found or
///   missed without counting either way.
/// - plain text: one line per image, `FILE` then four numbers per face,
///   `x y width height` (pixels, top-left origin); `#` starts a comment; a line
///   with only `FILE` is an image with no faces.
public struct FaceLabels: Sendable {
    public struct Image: Sendable {
        /// Relative to the images folder.
        public var file: String
        public var faces: [Box]
        public var ignored: [Box]
    }

    public var images: [Image]

    /// Reads a label file's bytes; errors name the file (`path`) and the line.
    public init(bytes: [UInt8], path: String) throws(LabelError) {
        let text = String(decoding: bytes, as: UTF8.self)
        if text.drop(while: \.isWhitespace).first == "<" {
            images = try Self.imglab(bytes, path: path)
        } else {
            images = try Self.plain(text, path: path)
        }
        guard !images.isEmpty else { throw LabelError(path: path, reason: "lists no images") }
    }

    private static func imglab(_ bytes: [UInt8], path: String) throws(LabelError) -> [Image] {
        let root: MiniXMLElement
        do { root = try MiniXML.parse(bytes).root } catch { throw LabelError(path: path, reason: "not well-formed XML: \(error)") }
        guard root.name == "dataset", let list = root.child("images") else {
            throw LabelError(path: path, reason: "not an imglab dataset (expected <dataset><images>)")
        }
        var images: [Image] = []
        for element in list.children where element.name == "image" {
            guard let file = element.attribute("file"), !file.isEmpty else {
                throw LabelError(path: path, reason: "an <image> has no file attribute")
            }
            var image = Image(file: file, faces: [], ignored: [])
            for box in element.children where box.name == "box" {
                let numbers = ["left", "top", "width", "height"].map { box.attribute($0).flatMap { Int($0) } }
                guard let x = numbers[0], let y = numbers[1], let width = numbers[2], let height = numbers[3], width > 0, height > 0 else {
                    throw LabelError(path: path, reason: "a <box> in \(file) lacks whole-number left, top, width and height")
                }
                let face = Box(x: x, y: y, width: width, height: height)
                if box.attribute("ignore") == "1" { image.ignored.append(face) } else { image.faces.append(face) }
            }
            images.append(image)
        }
        return images
    }

    private static func plain(_ text: String, path: String) throws(LabelError) -> [Image] {
        var images: [Image] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = content.split(whereSeparator: \.isWhitespace)
            guard let file = words.first else { continue }
            let numbers = words.dropFirst().map { Int($0) }
            guard numbers.count % 4 == 0, numbers.allSatisfy({ $0 != nil }) else {
                throw LabelError(path: path, reason: "line \(number + 1): expected FILE then x y width height per face")
            }
            let values = numbers.map { $0! }
            let faces = stride(from: 0, to: values.count, by: 4).map {
                Box(x: values[$0], y: values[$0 + 1], width: values[$0 + 2], height: values[$0 + 3])
            }
            guard faces.allSatisfy({ $0.width > 0 && $0.height > 0 }) else {
                throw LabelError(path: path, reason: "line \(number + 1): a face has no area")
            }
            images.append(Image(file: String(file), faces: faces, ignored: []))
        }
        return images
    }
}

/// A label file that cannot be used: one line naming it.
public struct LabelError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "labels \(path): \(reason)" }
}
