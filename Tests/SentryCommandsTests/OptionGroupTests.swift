import ArgumentParser
import Foundation
import Scratch
import SentryApp
@testable import SentryCommands
import Testing
import Tracking

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
            (["--hysteresis", "9"], "--hysteresis 9.0 must be between 0.0 and 5.0"),
            (["--offset", "95"], "--offset 95 must be between 0 and 89"),
            (["--baud", "7"], "--baud 7 is not a standard rate"),
            (["--fire-cooldown", "0.5"], "--fire-cooldown 0.5 must be between 1.0"),
            (["--web-token", "t"], "--web-token, --web-insecure, --web-allow-host, --web-allow-origin and --web-max-clients go with --web"),
            (["--web", "8080", "--web-max-clients", "0"], "--web-max-clients 0 must be between 1 and 256"),
            (["--web", "8080", "--web-allow-host", "pi.local:80"], "--web-allow-host pi.local:80 must be a name without port or scheme"),
            (["--web", "8080", "--web-allow-origin", "pi.local"], "--web-allow-origin pi.local must be scheme://host[:port]"),
            (["--size", "10x10"], "--size 10x10 must be WIDTHxHEIGHT"),
            (["--detect-fps", "0"], "--detect-fps 0 must be between 0.5 and 240"),
            (["--search", "last-seen"], "--search last-seen needs --lost-after above 0"),
            (["--sim-noise", "100"], "--sim-noise 100.0 must be between 0.0 and 64.0"),
        ])
    func refusesBadValues(_ arguments: [String], _ message: String) {
        let refusal = Self.refusal(arguments)
        #expect(refusal?.contains(message) == true, "\(arguments): \(refusal ?? "accepted")")
    }

    @Test("the groups fill the pipeline's settings")
    func fillsSettings() throws {
        let run = try Run.parse(
            Self.base + [
                "--hysteresis", "0.5", "--offset", "30", "--mount", "turret", "--fire", "--lock-after", "1",
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

    @Test("live settings are read by run's own parser: accepted values reach the pipeline, refused ones say why")
    func liveSettings() throws {
        let switches = Set(SettingsFile.catalog.switches)
        let accepted = try Run.liveSettings(base: Self.base, values: ["hysteresis": "0", "offset": "30", "tilt": "true"], switches: switches).get()
        #expect(accepted.pipeline.tracking.hysteresis == 0)
        #expect(accepted.pipeline.tracking.mapper.offset == 30)
        #expect(accepted.pipeline.tiltEnabled)
        guard case .failure(let refusal) = Run.liveSettings(base: Self.base, values: ["hysteresis": "-1"], switches: switches) else {
            Issue.record("a negative hysteresis was accepted")
            return
        }
        #expect(refusal.description.contains("--hysteresis -1.0 must be between 0.0 and 5.0"), "\(refusal)")
        guard case .failure(let notASwitch) = Run.liveSettings(base: Self.base, values: ["tilt": "maybe"], switches: switches) else {
            Issue.record("tilt = maybe was accepted")
            return
        }
        #expect(notASwitch.description.contains("--tilt is on or off"))
    }

    @Test("every live key is one of run's flags, and the settings file's keys are run's long flags")
    func catalog() {
        let catalog = SettingsFile.catalog
        let all = Set(catalog.options + catalog.switches)
        for key in Run.liveKeys { #expect(all.contains(key), "\(key)") }
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
}
