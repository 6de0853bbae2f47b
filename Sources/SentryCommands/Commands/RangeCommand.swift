import ArgumentParser
import Logging
import SentryApp
import ServoSim
import ShootingRange
import TextOutput

/// `sentry range`: the virtual shooting range. Each scenario's people walk
/// before the camera, `run` aims and fires the simulated turret at them
/// (armed, on the frame clock), and the judge flies every shot.
struct RangeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "range",
        abstract: "Fire the simulated turret at people walking before a virtual camera, and count the hits.",
        discussion: """
            Each scenario runs sentry armed (--fire --tilt) on --camera range:SCENARIO:PHOTO with --serial sim; \
            a judge flies every shot (--trigger-delay, then the dart at --muzzle-speed) and says whether it met \
            a torso, a face or nothing. --turns N runs each scenario N times, the walks begun 0.7 s later each turn \
            (range:SCENARIO+SECONDS:PHOTO), and counts them together. Flags after -- go to the run, e.g. -- --fire-cooldown 2 --detector haar.
            """
    )

    @Option(help: "A photo with a face: the head every person on the range wears.")
    var face: String

    @Option(help: "Scenarios, comma-separated (default: all): \(RangeScenario.all.map(\.name).joined(separator: ", ")).")
    var scenarios: String?

    @Option(help: "Runs of each scenario, the walks begun \(RangeCommand.turnStep) s later each turn: more shots, at other moments of the walk.")
    var turns = 1

    @Flag(help: "Also list every shot: when, what it met, and how far from the torso's middle.")
    var shots = false

    @Flag(help: "Run unarmed (no --fire) and measure the aim instead: how far the pan points from the nearest face, median and 90th percentile, in degrees.")
    var unarmed = false

    @Argument(parsing: .captureForPassthrough, help: "Flags for the run, after --.")
    var runFlags: [String] = []

    /// Seconds each turn begins the walks later than the one before: no whole number of frames, and short of every walk's leg.
    static let turnStep = 0.7

    func validate() throws {
        guard !face.isEmpty else { throw ValidationError("--face needs a photo with a face") }
        guard (1...20).contains(turns) else { throw ValidationError("--turns \(turns) is not 1-20: give how many runs of each scenario to count") }
        for name in chosen.names where RangeScenario.named(name) == nil {
            throw ValidationError("--scenarios: '\(name)' is none of \(RangeScenario.all.map(\.name).joined(separator: ", "))")
        }
    }

    private var chosen: (names: [String], scenarios: [RangeScenario]) {
        let names = scenarios.map { $0.split(separator: ",").map(String.init) } ?? RangeScenario.all.map(\.name)
        return (names, names.compactMap(RangeScenario.named))
    }

    func run() throws {
        let logger = makeLogger(level: "warning")
        var table =
            unarmed
            ? [["scenario", "speed", "median aim error", "p90 aim error"]]
            : [["scenario", "speed", "shots", "hits", "misses", "faces", "first shot after lock", "median miss"]]
        for scenario in chosen.scenarios {
            var score = RangeScore(scenario: scenario), aim = RangeAim(scenario: scenario)
            for turn in 0..<turns {
                let startOffset = Double(turn) * Self.turnStep
                let (run, summary) = try runOnce(scenario, startingLater: startOffset, logger: logger)
                let walked = scenario.startingLater(by: startOffset)
                if unarmed {
                    aim.add(track: summary.servoTrack, walked: walked)
                } else {
                    let judge = RangeJudge(world: RangeWorld(), triggerDelay: run.lockFire.triggerDelay, muzzleSpeed: run.lockFire.muzzleSpeed)
                    score.add(summary: summary, walked: walked, judge: judge)
                }
            }
            table.append(unarmed ? aim.row : score.row)
            if shots {
                for outcome in score.outcomes {
                    print(scenario.name.padded(to: 14) + String(printf: "%6.2f s  ", outcome.time) + outcome.kind.rawValue.padded(to: 6) + String(printf: "%+4.0f cm across, %+4.0f cm up", 100 * outcome.across, 100 * outcome.up))
                }
            }
        }
        let widths = table[0].indices.map { column in table.map { $0[column].count }.max()! + 2 }
        for row in table { print(String(zip(row, widths).map { $0.padded(to: $1) }.joined().reversed().drop { $0 == " " }.reversed())) }
    }

    /// One run of `scenario` on the simulated servo, its walks begun `startOffset` in, with the run's flags.
    private func runOnce(_ scenario: RangeScenario, startingLater startOffset: Double, logger: Logger) throws -> (Run, Runner.Summary) {
        let flags = runFlags.first == "--" ? Array(runFlags.dropFirst()) : runFlags
        let camera = "range:\(scenario.name)" + (startOffset > 0 ? String(printf: "+%g", startOffset) : "") + ":\(face)"
        let run: Run
        do {
            let armed = unarmed ? [] : ["--fire"]
            run = try Run.parse(["--camera", camera, "--serial", "sim"] + armed + ["--tilt", "--fov", "\(RangeWorld().fieldOfView)", "--quiet"] + flags)
        } catch {
            throw ValidationError(Run.message(for: error))
        }
        var options = try run.runOptions(camera: run.camera, serial: simulatedSerialName)
        options.keepResults = true
        let summary = try failingCleanly { try Runner.run(options, logger: logger) }
        return (run, summary)
    }
}

/// One scenario's shots, judged, over its turns.
struct RangeScore {
    var scenario: RangeScenario
    var outcomes: [RangeJudge.Outcome] = []
    /// Each turn's seconds from the first lock to the first shot (none without either).
    var firstShotsAfterLock: [Double] = []

    init(scenario: RangeScenario) { self.scenario = scenario }

    /// Judges one turn's shots at `walked` (the scenario as that turn began it).
    mutating func add(summary: Runner.Summary, walked: RangeScenario, judge: RangeJudge) {
        let track = summary.servoTrack
        let shots = SimulatedServo.shotTimes(in: track).map(RangeJudge.Shot.init)
        outcomes += shots.map { judge.judge($0, people: walked.people) { time in SimulatedServo.horns(at: time, in: track) } }
        if let lock = summary.results.first(where: { $0.isLocked })?.timestamp, let first = shots.first {
            firstShotsAfterLock.append(first.time - lock)
        }
    }

    var row: [String] {
        let hits = outcomes.filter { $0.kind == .hit }.count, faces = outcomes.filter { $0.kind == .face }.count
        let misses = outcomes.count - hits - faces
        let distances = outcomes.map { ($0.across * $0.across + $0.up * $0.up).squareRoot() }.sorted()
        // Over several turns the median and the slowest: the goal is a first shot soon after every lock.
        let firstShots = firstShotsAfterLock.sorted()
        let firstShot: String? =
            switch firstShots.count {
            case 0: nil
            case 1: String(printf: "%.2f s", firstShots[0])
            default: String(printf: "%.2f s, at most %.2f s", firstShots[firstShots.count / 2], firstShots.last!)
            }
        return [
            scenario.name, scenario.speed == 0 ? "still" : String(printf: "%g m/s", scenario.speed), "\(outcomes.count)",
            outcomes.isEmpty ? "0" : String(printf: "%d (%.0f%%)", hits, 100 * Double(hits) / Double(outcomes.count)), "\(misses)", "\(faces)",
            firstShot ?? "-",
            distances.isEmpty ? "-" : String(printf: "%.0f cm", 100 * distances[distances.count / 2]),
        ]
    }
}

/// How well an unarmed turret follows: the pan's distance from the nearest
/// person's face, every 30th of a second after the first second, over the turns.
struct RangeAim {
    var scenario: RangeScenario
    var errors: [Double] = []
    let world = RangeWorld()

    init(scenario: RangeScenario) { self.scenario = scenario }

    /// One turn's aim at `walked` (the scenario as that turn began it).
    mutating func add(track: [SimulatedServo.Sample], walked: RangeScenario) {
        errors += stride(from: 1.0, to: walked.duration, by: 1 / 30.0).map { time in
            let pan = SimulatedServo.horns(at: time, in: track).pan
            return walked.people.map { person in
                let place = person.position(at: time)
                return abs(world.angles(x: place.x, y: world.faceHeight, z: place.z).pan - pan)
            }.min()!
        }
    }

    var row: [String] {
        let sorted = errors.sorted()
        return [
            scenario.name, scenario.speed == 0 ? "still" : String(printf: "%g m/s", scenario.speed),
            String(printf: "%.2f°", sorted[sorted.count / 2]), String(printf: "%.2f°", sorted[sorted.count * 9 / 10]),
        ]
    }
}
