import CoreAffinity
import FaceMesh
import Imaging
import TextOutput

/// `sentry bench --expressions`: what the face mesh costs, against LiteRT's.
extension Bench {
    /// What a mesh reading costs besides its networks: its three crops of `frame`
    /// (the last), where the followed face is.
    static func cropReport(_ meshFollowing: MeshFollowingDetector, frame: Frame?) {
        guard let face = meshFollowing.landmarks, let frame else { return }
        let colour = meshFollowing.readsColour ? frame.chroma : nil
        let crops = meshFollowing.mesh.cropSeconds(in: frame.image, colour: colour, region: FaceMesh.region(following: face), runs: 200)
        guard let fastest = crops.min() else { return }
        let what = "a reading's: the face's 192x192 and both eyes' 64x64, in \(colour == nil ? "gray" : "colour")"
        print(String(printf: "  mesh crops    \(Stats(seconds: crops)), fastest %.3f ms (\(what))", fastest * 1000))
    }

    /// The face mesh's two networks alone against LiteRT's, in turns on one core
    /// (as BlazeFace's), each on the input it last had: the mesh on the last frame's
    /// crop, the iris model on its last eye; LiteRT on the fixtures' crops.
    static func meshReport(_ mesh: FaceMesh, tools: String?, profile: Bool) {
        if profile {
            for network in FaceMesh.Network.allCases {
                print("  \(network.rawValue):")
                printProfile(mesh.stepTimings(network, runs: 50))
            }
        }
        guard let tools, let reference = ReferenceProcess(["\(tools)/facemesh_reference.py", "bench", "--turns", "--runs", "50"]),
            reference.readLine() != nil
        else {
            print("  LiteRT face mesh reference: skipped (run `make setup` to install the pip references)")
            return
        }
        let coresBefore = Self.shareCore(with: reference.processIdentifier)
        defer { coresBefore?.allow() }
        for network in FaceMesh.Network.allCases {
            let turns = Self.takeTurns(with: reference, request: "run \(network.rawValue) \(Self.runsPerTurn)") {
                mesh.backToBackSeconds(network, runs: Self.runsPerTurn)
            }
            guard !turns.ours.isEmpty, !turns.theirs.isEmpty else { break }
            let (sentry, litert) = (Stats(seconds: turns.ours), Stats(seconds: turns.theirs))
            print(
                "  \(network.rawValue.padded(to: 5)) network \(sentry), LiteRT \(litert) (one thread, \(Self.turns) turns of \(Self.runsPerTurn), one core)"
            )
            print(
                String(
                    printf: "  ratio sentry/LiteRT \(network.rawValue): median %.2fx, turn by turn %.2fx, fastest %.2fx (%.3f against %.3f ms)",
                    sentry.median / litert.median, Stats.median(turns.ratios), sentry.fastest / litert.fastest, sentry.fastest,
                    litert.fastest))
        }
        _ = reference.finish()
    }
}
