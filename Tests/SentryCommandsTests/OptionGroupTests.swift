import ArgumentParser
import Config
import Console
import Foundation
import RunControl
import Scratch
import SentryApp
@testable import SentryCommands
import Synchronization
import Testing
import Tracking
import Waiting

/// The command line, the settings file and the console's live settings go
/// through the same option groups: tested here in process, no binary spawned.
@Suite("Option groups: one definition, one check, for flags, the settings file and live settings")
struct OptionGroupTests {
    static let base = ["--camera", "clip.mkv", "--serial", "sim"]

    /// Why `run` refuses `arguments`, or `nil`.
    static func refusal(_ arguments: [String]) -> String? {
        do {
            _ = try Run.parse(base + arguments)
            return nil
        } catch {
            return Run.message(for: error)
        }
    }

    @Test(
        "each group refuses its bad values with the flag and its range",
        arguments: [
            (["--hysteresis", "9"], "--hysteresis 9 must be between 0 and 5"),
            (["--offset", "95"], "--offset 95 must be between 0 and 89"),
            (["--baud", "7"], "--baud 7 is not a standard rate"),
            (["--fire-cooldown", "0.5"], "--fire-cooldown 0.5 must be between 1 and 3600"),
            (["--web-token", "t"], "--web-token, --web-insecure, --web-allow-host, --web-allow-origin and --web-max-clients go with --web"),
            (["--web", "8080", "--web-max-clients", "0"], "--web-max-clients 0 must be between 1 and 256"),
            (["--web", "8080", "--web-allow-host", "pi.local:80"], "--web-allow-host pi.local:80 must be a name without port or scheme"),
            (["--web", "8080", "--web-allow-origin", "pi.local"], "--web-allow-origin pi.local must be scheme://host[:port]"),
            (["--size", "10x10"], "--size 10x10 must be WIDTHxHEIGHT"),
            (["--detect-fps", "0"], "--detect-fps 0 must be between 0.5 and 240"),
            (["--search", "last-seen"], "--search last-seen needs --lost-after above 0"),
            (["--sim-noise", "100"], "--sim-noise 100 must be between 0 and 64"),
        ])
    func refusesBadValues(_ arguments: [String], _ message: String) {
        let refusal = Self.refusal(arguments)
        #expect(refusal?.contains(message) == true, "\(arguments): \(refusal ?? "accepted")")
    }

    @Test("the groups fill the pipeline's settings")
    func fillsSettings() throws {
        let run = try Run.parse(
            Self.base + [
                "--hysteresis", "0.5", "--offset", "30", "--mount", "turret", "--fire", "--tilt", "--lock-after", "1",
                "--detector", "haar", "--detect-fps", "every", "--size", "320x240", "--baud", "115200",
            ])
        let settings = run.pipelineSettings
        #expect(settings.tracking.hysteresis == 0.5)
        #expect(settings.tracking.mapper.offset == 30)
        #expect(settings.tracking.mount == .turret)
        #expect(settings.lockAfter == 1)
        #expect(settings.fire != nil)
        #expect(run.detection.options.kind == .haar && run.detection.options.detectRate == nil)
        #expect(run.capture.frameSize?.width == 320)
        #expect(run.link.baud == 115200)
    }

    @Test("relay takes the same serial flags as run, and refuses a relay as its port")
    func relaySharesTheLink() throws {
        let relay = try RelayCommand.parse(["--serial", "sim", "--baud", "115200", "--boot-wait", "0", "--on-exit", "center"])
        #expect(relay.link.baud == 115200 && relay.link.bootWait == 0 && relay.link.onExit == .center)
        #expect(throws: (any Error).self) { try RelayCommand.parse(["--serial", "sim", "--baud", "7"]) }
        #expect(throws: (any Error).self) { try RelayCommand.parse(["--serial", "ws://127.0.0.1:12354"]) }
        #expect(throws: (any Error).self) { try RelayCommand.parse(["--serial", "sim", "--listen", "0.0.0.0:12354"]) }
    }

    /// `changes` applied to a run parsed from `base`: the settings handed on, or the refusal.
    static func live(_ changes: [String: SettingValue], on editor: LiveRunSettings) -> Result<LiveSettings, ControlRefusal> {
        var handed: LiveSettings?
        return editor.change(changes) { live in
            handed = live
            return .success(())
        }.map { _ in handed! }
    }

    @Test("a live change parses one value as its flag does: accepted values reach the pipeline, refused ones change nothing and say why")
    func liveSettings() throws {
        let editor = LiveRunSettings(try Run.parse(Self.base + ["--deadband", "2"]))
        let before = editor.values
        #expect(before["deadband"] == .integer(2) && before["offset"] == .integer(40) && before["detector"] == .word("") && before["spare"] == .word("none"))
        let accepted = try Self.live(["hysteresis": .integer(0), "offset": .integer(30), "tilt": .bool(true)], on: editor).get()
        #expect(accepted.pipeline.tracking.hysteresis == 0)
        #expect(accepted.pipeline.tracking.mapper.offset == 30)
        #expect(accepted.pipeline.tiltEnabled)
        #expect(accepted.pipeline.deadband == 2)
        #expect(editor.values["offset"] == .integer(30) && editor.values["tilt"] == .bool(true))
        let refusals: [([String: SettingValue], String)] = [
            (["hysteresis": .integer(-1)], "--hysteresis -1 must be between 0 and 5 degrees"),
            (["tilt": .word("maybe")], "--tilt is on or off"),
            (["tilt": .integer(1)], "--tilt is on or off"),
            (["offset": .word("abc")], "--offset takes a whole number from 0 to 89, not 'abc'"),
            (["offset": .number(30.5)], "--offset takes a whole number from 0 to 89, not '30.5'"),
            (["search": .word("nowhere")], "--search takes one of scan, hold, last-seen, not 'nowhere'"),
            (["detect-fps": .word("often")], "--detect-fps takes a number from 0.5 to 240 or 'every'"),
            // All or nothing: a good value beside a bad one is not kept either.
            (["offset": .integer(20), "search": .word("last-seen")], "--search last-seen needs --lost-after above 0"),
            (["serial": .word("/dev/ttyS0")], "'serial' cannot be changed while running"),
        ]
        let kept = editor.values
        for (changes, message) in refusals {
            guard case .failure(let refusal) = Self.live(changes, on: editor) else {
                Issue.record("\(changes) was accepted")
                continue
            }
            #expect(refusal.description.contains(message), "\(refusal)")
        }
        #expect(editor.values == kept)
        // A refusal from the one applying them (a detector that cannot be built) keeps nothing either.
        let vetoed = editor.change(["offset": .integer(10)]) { _ in .failure(ControlRefusal("no model")) }
        #expect((try? vetoed.get()) == nil && editor.values == kept)
    }

    @Test("live, --spare takes the household's names beside the expressions, and refuses a name nobody is enrolled under")
    func spareByNameLive() throws {
        let editor = LiveRunSettings(try Run.parse(Self.base + ["--known", "/srv/household"]), household: ["alice", "bob"])
        let choices = editor.fields.first { $0.key == "spare" }?.choices ?? []
        #expect(choices.contains("smile") && choices.contains("known") && choices.suffix(2) == ["alice", "bob"])
        let spared = try Self.live(["spare": .word("alice")], on: editor).get()
        #expect(spared.pipeline.sparedPeople == .person("alice") && spared.pipeline.spare == nil)
        guard case .failure(let refusal) = Self.live(["spare": .word("carol")], on: editor) else {
            Issue.record("--spare carol was accepted")
            return
        }
        #expect(refusal.description.hasPrefix("--spare carol: nobody called carol is enrolled in /srv/household (enrolled: alice, bob)"), "\(refusal)")
        #expect(editor.values["spare"] == .word("alice"))
    }

    @Test("the settings stay readable while a change builds its detector: the frame loop never waits for a build")
    func readableDuringABuild() throws {
        let editor = LiveRunSettings(try Run.parse(Self.base))
        let building = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let changed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = editor.change(["min-score": .number(0.4)]) { _ in
                building.signal()
                release.wait()
                return .success(())
            }
            changed.signal()
        }
        building.wait()
        // Read from another thread: were the read to wait for the build, the test would see it, not hang.
        let read = Mutex<[String: SettingValue]?>(nil)
        Thread.detachNewThread {
            let values = editor.values
            read.withLock { $0 = values }
        }
        #expect(eventually(within: 5) { read.withLock { $0 != nil } }, "values waited for the detector's build")
        #expect(read.withLock { $0?["min-score"] } == .number(0.5), "a change in progress is not seen before it is kept")
        release.signal()
        changed.wait()
        #expect(editor.values["min-score"] == .number(0.4))
    }

    @Test("each live setting is read with its type (a number, a switch, a word), and Save writes it so, automatic choices left out")
    func fileValues() throws {
        let editor = LiveRunSettings(try Run.parse(Self.base + ["--detect-fps", "every", "--tilt", "--min-score", "0.3"]))
        #expect(editor.values["min-score"] == .number(0.3) && editor.values["detect-fps"] == .word("every") && editor.values["tilt"] == .bool(true))
        let values = Dictionary(uniqueKeysWithValues: editor.fileValues.map { ($0.key, $0.value) })
        #expect(values["offset"] == .integer(40) && values["tilt"] == .bool(true) && values["kp"] == .number(TurretLoop.Gains.standard.proportional))
        #expect(values["detect-fps"] == .string("every") && values["expressions-fps"] == .number(15) && values["search"] == .string("scan"))
        #expect(values["detector"] == nil && values["spare"] == .string("none"))
        // --detector and --fov left out are automatic (the detector the machine has; SPEC §2's span).
        #expect(editor.fileValues.map(\.key) == Run.live.map(\.setting.key).filter { $0 != "detector" && $0 != "fov" })
    }

    @Test("each live setting's range is the one its flag is checked against, and its field says so")
    func rangesAgree() throws {
        // Every setting at its minimum in one command line, then at its maximum: a debug
        // build checks the whole command at each parse, a tenth of a second.
        var (lowest, highest): ([String], [String]) = ([], [])
        for binding in Run.live {
            let setting = binding.setting
            let field = setting.field
            #expect(field.key == setting.key && !field.label.isEmpty && !field.help.isEmpty)
            guard let maximum = field.maximum, let minimum = field.minimum else {
                #expect(field.kind == "switch" || field.kind == "choice", "\(setting.key)")
                continue
            }
            let whole = field.kind == "integer"
            func text(_ value: Double) -> String { whole ? String(Int(value)) : String(value) }
            lowest += ["--\(setting.key)", text(minimum)]
            highest += ["--\(setting.key)", text(maximum)]
            let over = text(maximum + (whole ? 1 : 0.5))
            #expect(Self.refusal(["--\(setting.key)", over]) != nil, "--\(setting.key) \(over): accepted")
        }
        for extremes in [lowest, highest] {
            let refusal = Self.refusal(extremes)
            #expect(refusal == nil, "\(extremes.joined(separator: " ")): \(refusal ?? "")")
        }
    }

    @Test("every live key is one of run's flags, and the settings file's keys are run's long flags")
    func catalog() {
        let catalog = SettingsFile.catalog
        let all = Set(catalog.options + catalog.switches)
        for key in Run.live.map(\.setting.key) { #expect(all.contains(key), "\(key)") }
        for key in ["camera", "serial", "baud", "hysteresis", "detect-fps", "size", "web-fps", "lock-after"] {
            #expect(catalog.options.contains(key), "\(key)")
        }
        for key in ["tilt", "fire", "smooth", "realtime"] { #expect(catalog.switches.contains(key), "\(key)") }
        #expect(catalog.defaults["hysteresis"] == String(SteadyDegree.standardSlack))
    }

    @Test("a bad value in the settings file is refused with its file, line and key")
    func settingsFileLine() throws {
        let scratch = try ScratchDirectory("options")
        let path = try scratch.write("offset = 30\nhysteresis = 7\n", to: "sentry.toml")
        #expect(throws: (any Error).self) { try SettingsFile.merge(["--config", path]) }
        do {
            _ = try SettingsFile.merge(["--config", path])
        } catch {
            #expect(error.description.contains("\(path):2: hysteresis"), "\(error)")
        }
    }

    @Test("a user who falls back on the system's settings file runs without the service's events folder, told why; named with --config, it is kept")
    func systemEventsFolder() throws {
        let scratch = try ScratchDirectory("options")
        // A folder no user can make (under a file), as /var/lib/sentry/events is to all but the service's user.
        let unwritable = try scratch.write("", to: "a-file") + "/events"
        let system = try scratch.write("events = \"\(unwritable)\"\noffset = 30\n", to: "system.toml")
        let environment = ["XDG_CONFIG_HOME": scratch.file("nothing-here").path, "HOME": scratch.path]
        let fellBack = try SettingsFile.merge(["--camera", "photo.png"], environment: environment, systemPath: system)
        #expect(!fellBack.arguments.contains("--events") && fellBack.arguments.contains("--offset"), "\(fellBack.arguments)")
        #expect(fellBack.notes.count == 1 && fellBack.notes[0].contains(unwritable) && fellBack.notes[0].contains("--events DIR"))
        let named = try SettingsFile.merge(["--config", system], environment: environment, systemPath: system)
        #expect(named.arguments.contains("--events") && named.notes.isEmpty)
        let writable = try scratch.write("events = \"\(scratch.file("events").path)\"\n", to: "writable.toml")
        #expect(try SettingsFile.merge([], environment: environment, systemPath: writable).arguments.contains("--events"))
    }
}
