import FaceRecognition
import FoundationEssentials

/// `--known DIR`: the household, one folder per person holding a few photos
/// of them (`DIR/alice/*.jpg`), the way people already keep them. Each photo
/// with exactly one face is enrolled under its folder's name; a photo with no
/// face or several is flagged and left out. The embeddings are kept in
/// `DIR/.sentry-known.json` and a photo is read again only when it changes
/// (its size or time), so a start costs milliseconds, not a second a photo.
public struct KnownFolder: Sendable {
    /// One photo and what was found in it.
    public struct Photo: Sendable, Codable, Equatable {
        /// Its path inside the folder: `alice/beach.jpg`.
        public var path: String
        public var size: Int
        public var modified: Double
        public var faces: Int
        /// The face's embedding, when it has exactly one.
        public var embedding: [Float]?

        /// The person it is a photo of: its folder's name.
        public var person: String { String(path.prefix { $0 != "/" }) }

        /// Why it is not used, or nil.
        public var problem: String? {
            switch faces {
            case 0: "no face found: use a photo where the face is clear and at least 80 pixels wide"
            case 1: nil
            default: "\(faces) faces: crop it to the one person"
            }
        }
    }

    /// A folder that cannot be used: one line, with the fix.
    public struct Problem: Error, CustomStringConvertible {
        public let directory: String
        public let reason: String
        public var description: String { "--known \(directory): \(reason)" }

        public init(directory: String, reason: String) {
            (self.directory, self.reason) = (directory, reason)
        }
    }

    /// The cache file's name inside the folder.
    public static let cacheName = ".sentry-known.json"
    static let photoExtensions: Set = ["jpg", "jpeg", "png"]

    public let directory: String
    /// Every photo found, sorted by path.
    public let photos: [Photo]
    /// How many photos were read this time (the others came from the cache).
    public let readNow: Int

    /// The enrolled people.
    public var people: KnownPeople {
        KnownPeople(enrolled: photos.compactMap { photo in photo.embedding.map { KnownPeople.Enrolled(name: photo.person, photo: photo.path, embedding: $0) } })
    }

    /// Everyone with a usable photo, sorted.
    public var names: [String] { Array(Set(photos.filter { $0.problem == nil }.map(\.person))).sorted() }

    /// Reads the folder, the photos that changed since the cache was written through `reader`
    /// (which must recognise faces), and writes the cache again when anything changed.
    public init(_ directory: String, reader: FaceReader) throws(Problem) {
        self.directory = directory
        var isFolder = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder else {
            throw Problem(directory: directory, reason: "no such folder; make one with a folder per person holding their photos (\(directory)/alice/1.jpg)")
        }
        let found = try Self.photoFiles(in: directory)
        guard !found.isEmpty else {
            throw Problem(directory: directory, reason: "holds no photos; put each person's photos in a folder of their name (\(directory)/alice/1.jpg)")
        }
        let cachePath = directory + "/" + Self.cacheName
        let cached = Self.readCache(cachePath)
        var photos: [Photo] = []
        var readNow = 0
        for (path, size, modified) in found {
            if let old = cached[path], old.size == size, old.modified == modified {
                photos.append(old)
                continue
            }
            readNow += 1
            let faces = (try? reader.read(path: directory + "/" + path).report.faces) ?? []
            photos.append(Photo(path: path, size: size, modified: modified, faces: faces.count, embedding: faces.count == 1 ? faces[0].embedding : nil))
        }
        self.photos = photos
        self.readNow = readNow
        if readNow > 0 || cached.count != photos.count { Self.writeCache(photos, to: cachePath) }
    }

    /// The photos in the folder's folders (hidden ones left out), with their size and time, sorted.
    private static func photoFiles(in directory: String) throws(Problem) -> [(String, Int, Double)] {
        let manager = FileManager.default
        guard let people = try? manager.contentsOfDirectory(atPath: directory) else {
            throw Problem(directory: directory, reason: "cannot be read (permission denied?)")
        }
        var files: [(String, Int, Double)] = []
        for person in people where !person.hasPrefix(".") {
            var isFolder = false
            guard manager.fileExists(atPath: directory + "/" + person, isDirectory: &isFolder), isFolder,
                let names = try? manager.contentsOfDirectory(atPath: directory + "/" + person)
            else { continue }
            for name in names where !name.hasPrefix(".") && photoExtensions.contains(name.split(separator: ".").last.map { $0.lowercased() } ?? "") {
                let path = person + "/" + name
                guard let attributes = try? manager.attributesOfItem(atPath: directory + "/" + path) else { continue }
                let size = (attributes[.size] as? Int) ?? 0
                let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                files.append((path, size, modified))
            }
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// The cache's file: its version, then the photos.
    private struct Cache: Codable {
        var version: Int
        var photos: [Photo]
    }

    /// The cached photos by path; none when the file is missing, unreadable or of another version.
    private static func readCache(_ path: String) -> [String: Photo] {
        guard let data = FileManager.default.contents(atPath: path), let cache = try? JSONDecoder().decode(Cache.self, from: data), cache.version == 1
        else { return [:] }
        return Dictionary(cache.photos.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Writes the cache; a folder sentry may not write is read again at the next start, nothing worse.
    private static func writeCache(_ photos: [Photo], to path: String) {
        guard let data = try? JSONEncoder().encode(Cache(version: 1, photos: photos)) else { return }
        try? data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
