/// Who a face is, as far as the enrolled photos tell: the nearest enrolled
/// face, named when it lies within dlib's threshold.
public struct PersonMatch: Sendable, Equatable {
    /// The person, or nil for a stranger.
    public var name: String?
    /// The distance to the nearest enrolled face (dlib's: under 0.6, one person).
    public var distance: Float
    /// Whose face that nearest one is, named or not.
    public var nearest: String?

    public init(name: String?, distance: Float, nearest: String?) {
        (self.name, self.distance, self.nearest) = (name, distance, nearest)
    }
}

/// The household: each enrolled photo's embedding under its person's name.
public struct KnownPeople: Sendable {
    public struct Enrolled: Sendable, Equatable {
        public var name: String
        public var photo: String
        public var embedding: [Float]

        public init(name: String, photo: String, embedding: [Float]) {
            (self.name, self.photo, self.embedding) = (name, photo, embedding)
        }
    }

    public var enrolled: [Enrolled]

    public init(enrolled: [Enrolled]) {
        self.enrolled = enrolled
    }

    /// Everyone with at least one usable photo, sorted.
    public var names: [String] { Array(Set(enrolled.map(\.name))).sorted() }

    /// The nearest enrolled face to `embedding`; its name when within `FaceEmbedder.samePersonDistance`.
    public func identify(_ embedding: [Float]) -> PersonMatch {
        var best: (name: String, distance: Float)?
        for person in enrolled {
            let distance = FaceEmbedder.distance(person.embedding, embedding)
            if distance < best?.distance ?? .infinity { best = (person.name, distance) }
        }
        guard let best else { return PersonMatch(name: nil, distance: .infinity, nearest: nil) }
        return PersonMatch(name: best.distance < FaceEmbedder.samePersonDistance ? best.name : nil, distance: best.distance, nearest: best.name)
    }
}

/// Whom `--spare` holds fire at among recognised people: the whole household
/// (`--spare known`) or one person in it (`--spare NAME`). A target not yet
/// recognised is held for either: sparing someone means waiting to know who it is.
public enum SparedPeople: Sendable, Equatable {
    case household
    case person(String)

    /// Whether a target recognised as `match` is spared.
    public func spares(_ match: PersonMatch) -> Bool {
        switch self {
        case .household: match.name != nil
        case .person(let name): match.name == name
        }
    }
}
