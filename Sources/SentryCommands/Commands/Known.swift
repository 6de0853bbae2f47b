import ArgumentParser
import PhotoFaces
import SentryApp

struct Known: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List who --known enrols: each person's usable photos, and the photos left out.",
        discussion: """
            The folder holds a folder per person with a few photos of them (DIR/alice/1.jpg, DIR/alice/2.png). \
            A photo is used when exactly one face is found in it; one with no face or several is named with the fix. \
            The faces' numbers are kept in DIR/.sentry-known.json and a photo is read again only when it changes. \
            Exits 1 when nobody can be enrolled.
            """
    )

    @OptionGroup(title: "Detection (as run finds faces)") var detection: DetectionOptions

    @Argument(help: ArgumentHelp("The household's folder.", valueName: "dir"))
    var directory: String

    func run() throws {
        let folder = try failingCleanly { try Recognising.reader(detector: detection.options, known: directory).folder! }
        let usable = folder.photos.filter { $0.problem == nil }
        print("\(directory): \(folder.names.count == 1 ? "1 person" : "\(folder.names.count) people"), \(usable.count == 1 ? "1 photo" : "\(usable.count) photos") used"
            + (folder.readNow < folder.photos.count ? " (\(folder.photos.count - folder.readNow) from \(KnownFolder.cacheName))" : ""))
        for name in folder.names {
            let count = usable.filter { $0.person == name }.count
            print("  \(name): \(count == 1 ? "1 photo" : "\(count) photos")")
        }
        for photo in folder.photos {
            if let problem = photo.problem { print("  \(photo.path): not used: \(problem)") }
        }
        if folder.names.isEmpty { throw ExitCode.failure }
    }
}
