import Detectors
import FaceRecognition

/// A `FaceReader` that recognises faces, for `sentry faces --known` and `sentry known`.
public enum Recognising {
    /// A reader that recognises faces, knowing the household in `known` (read, or refreshed, first).
    public static func reader(detector options: DetectorOptions, known: String?) throws -> (reader: FaceReader, folder: KnownFolder?) {
        let reader = try FaceReader(detector: options, embedder: try FaceEmbedder.installed())
        guard let known else { return (reader, nil) }
        let folder = try KnownFolder(known, reader: reader)
        reader.known = folder.people
        return (reader, folder)
    }

    /// The household in `known` (read, or refreshed, first) and the network that enrolled
    /// it, for a run to go on recognising with (the model is read once).
    public static func household(detector options: DetectorOptions, known: String) throws -> (folder: KnownFolder, embedder: FaceEmbedder) {
        let embedder = try FaceEmbedder.installed()
        let folder = try KnownFolder(known, reader: try FaceReader(detector: options, embedder: embedder))
        return (folder, embedder)
    }
}
