import Foundation
import HTTPTestClient
import Geometry
import JPEG
import MonotonicTime
import Scratch
import Waiting
import ServoSim
import Testing

#if canImport(Glibc)
    import Glibc
    import TestClips
#endif

/// `sentry --web` running on the demo clip, in real time, on a port the
/// system chose (`--web 127.0.0.1:0`), read from its log line.
final class RunningConsole {
    let process = Process()
    private(set) var port: UInt16 = 0
    /// Its standard error (`errors`), and the test's screenshots of it.
    let scratch: ScratchDirectory
    let errors: URL
    var base: String { "http://127.0.0.1:\(port)" }

    /// `confinedTo`: on that CPU alone (through taskset); `realtime`: the clip at its own pace, else as fast as it goes;
    /// `camera`: the demo clip, looped, unless another is named.
    init(
        _ extra: [String] = [], serial: String = "sim", web: String? = nil, environment: [String: String] = [:], confinedTo cpu: Int? = nil,
        realtime: Bool = true, camera: String? = nil
    ) throws {
        scratch = try ScratchDirectory("web")
        errors = scratch.file("stderr.log")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: cpu == nil ? SentryProcess.executable : "/usr/bin/taskset")
        process.arguments =
            (cpu.map { ["--cpu-list", "\($0)", SentryProcess.executable] } ?? []) + [
                "--camera", camera ?? DemoClip.path, "--serial", serial, realtime ? "--realtime" : "--no-realtime", camera == nil ? "--loop" : "--no-loop",
                "--quiet", "--log-level", "notice",
                "--web", web ?? "127.0.0.1:0",
            ] + extra
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        _ = eventually(within: 15) { [self] in
            port = listeningPort(in: log, after: "web console on http://") ?? 0
            return port != 0 || !process.isRunning
        }
        let token = extra.firstIndex(of: "--web-token").map { ["Authorization: Bearer \(extra[$0 + 1])"] } ?? []
        _ = eventually(within: 15) { [self] in
            !process.isRunning || (try? HTTP.request(port: port, "GET", "/api/status", headers: token))?.status == 200
        }
    }

    var log: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }

    func status() throws -> [String: Any] {
        let reply = try HTTP.request(port: port, "GET", "/api/status")
        return try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
    }

    func post(_ path: String, _ json: String) throws -> (status: Int, text: String) {
        let reply = try HTTP.request(port: port, "POST", path, body: json)
        return (reply.status, String(decoding: reply.body, as: UTF8.self))
    }

    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { _ = stop() }
}

/// A minimal HTTP/1.1 client on a blocking socket: enough to test a server
/// without trusting another HTTP library's view of it.
/// A viewer of `/stream.mjpg` that reads on its own thread and counts whole JPEG parts.
final class MJPEGStream: @unchecked Sendable {
    let fd: Int32
    private let lock = NSLock()
    private var raw: [UInt8] = []
    private var stopped = false
    private(set) var parts: [(index: Int, jpeg: [UInt8], at: Double)] = []

    init(port: UInt16, reading: Bool = true) throws {
        let client = try RawClient(port: port)
        fd = client.descriptor
        client.send(HTTP.request("GET", "/stream.mjpg"))
        guard reading else { return }
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 { break }
                lock.lock()
                raw += buffer[0..<n]
                let body =
                    raw.firstIndex(of: 13).flatMap { _ in HTTP.find(Array("\r\n\r\n".utf8), in: raw, from: 0) }.map { HTTP.dechunk(Array(raw[($0 + 4)...])) }
                    ?? []
                let found = Self.split(body)
                for part in found.dropFirst(parts.count) { parts.append((part.index, part.jpeg, monotonicSeconds())) }
                let done = stopped
                lock.unlock()
                if done { break }
            }
        }.start()
    }

    var count: Int { lock.withLock { parts.count } }
    var snapshot: [(index: Int, jpeg: [UInt8], at: Double)] { lock.withLock { parts } }

    /// Gone without a goodbye: a reset, as when a browser tab is killed.
    func abort() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        lock.withLock { stopped = true }
        close(fd)
    }

    static func split(_ bytes: [UInt8]) -> [(index: Int, jpeg: [UInt8])] {
        var parts: [(Int, [UInt8])] = []
        var position = 0
        while let end = HTTP.find(Array("\r\n\r\n".utf8), in: bytes, from: position) {
            let header = String(decoding: bytes[position..<end], as: UTF8.self)
            func value(_ name: String) -> Int? {
                header.split(separator: "\r\n").first { $0.hasPrefix(name + ":") }.flatMap {
                    Int($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces))
                }
            }
            guard let length = value("Content-Length"), let index = value("X-Frame-Index"), end + 4 + length <= bytes.count else { break }
            parts.append((index, Array(bytes[(end + 4)..<(end + 4 + length)])))
            position = end + 4 + length + 2
        }
        return parts
    }
}

@Suite("the web console, served by the real binary", .serialized)
struct WebConsoleProcessTests {
    @Test("every bad setting is refused with the flag's own message (or, for what is no value of its type, what it takes) and changes nothing")
    func settingsTable() throws {
        let console = try RunningConsole()
        let before = try #require(try console.status()["settings"] as? NSDictionary)
        let table: [(String, String)] = [
            ("offset", "99"), ("offset", "-1"), ("offset", "\"abc\""), ("deadband", "181"), ("lost-after", "-1"), ("lost-after", "\"nan\""),
            ("min-score", "2"), ("detector", "\"nope\""), ("switch-frames", "0"), ("switch-margin", "-1"), ("search", "\"nowhere\""),
            ("mount", "\"wall\""), ("fov", "0"), ("kp", "9"), ("ki", "-1"), ("kd", "5"), ("lock-after", "-2"), ("fire-tolerance", "0"),
            ("fire-cooldown", "0.5"), ("smooth-cutoff", "0"), ("smooth-beta", "101"), ("search", "\"last-seen\""), ("offset", "true"),
            ("detect-fps", "0"), ("detect-fps", "\"often\""),
        ]
        for (key, value) in table {
            let flagValue = value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            let cli = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--\(key)", flagValue])
            // The flag's one line, less what only a command line needs (where the flags are listed).
            let expected = String(cli.standardError.split(separator: "\n").first ?? "").replacingOccurrences(of: "Error: ", with: "")
                .replacingOccurrences(of: " (sentry run --help lists every flag)", with: "")
            #expect(cli.status != 0 && !expected.isEmpty, "\(key) \(value) passes as a flag")
            let reply = try console.post("/api/settings", "{\"\(key)\": \(value)}")
            #expect(reply.status == 400, "\(key) \(value): \(reply.text)")
            let error = (try? JSONSerialization.jsonObject(with: Data(reply.text.utf8)) as? [String: String])?["error"] ?? ""
            // The flag's parser says only that the value is invalid; the console says what the setting takes.
            if expected.hasPrefix("The value '") {
                #expect(error.hasPrefix("--\(key) takes ") && error.hasSuffix("not '\(flagValue)'"), "\(key) \(value): \(error)")
            } else {
                #expect(error == expected, "\(key) \(value)")
            }
        }
        for switchKey in ["tilt", "invert-x"] {
            #expect(try console.post("/api/settings", "{\"\(switchKey)\": \"maybe\"}").status == 400)
        }
        #expect(try console.post("/api/settings", "{\"serial\": \"/dev/ttyS0\"}").status == 400)
        #expect(try console.status()["settings"] as? NSDictionary == before)
        #expect(console.process.isRunning)
    }

    @Test("Save writes the file --config reads, keeping its comments; sentry config then shows the values from it")
    func save() throws {
        let scratch = try ScratchDirectory("save")
        let file = try scratch.write("# my turret\ndeadband = 1\n", to: "sentry.toml")
        let console = try RunningConsole(["--config", file])
        #expect(try console.post("/api/settings", #"{"offset": 25, "tilt": true}"#).status == 200)
        let saved = try console.post("/api/settings/save", "{}")
        #expect(saved.status == 200 && saved.text.contains(file), "\(saved.text)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.hasPrefix("# my turret\ndeadband = 1\n"))
        #expect(text.contains("offset = 25\n") && text.contains("tilt = true\n"))
        let config = try SentryProcess(["config", "--config", file])
        #expect(
            config.standardOutput.contains { _ in true }
                && config.standardOutput.split(separator: "\n").contains { $0.hasPrefix("offset ") && $0.contains("25") && $0.contains("\(file):") })
        // A file sentry may not write: refused with the reason, the run goes on.
        let unwritable = try RunningConsole([], environment: ["XDG_CONFIG_HOME": "/proc/sentry-cannot-write"])
        let refused = try unwritable.post("/api/settings/save", "{}")
        #expect(refused.status == 500 && refused.text.contains("cannot be written"), "\(refused.text)")
        #expect(unwritable.process.isRunning)
    }

    @Test("under the service (systemd's STATE_DIRECTORY, a settings file it cannot write), Save keeps the values in the service's folder and says how to keep them")
    func saveUnderTheService() throws {
        let scratch = try ScratchDirectory("save-service")
        let state = scratch.file("state").path
        let console = try RunningConsole([], environment: ["XDG_CONFIG_HOME": "/proc/sentry-cannot-write", "STATE_DIRECTORY": state])
        #expect(try console.post("/api/settings", #"{"offset": 25}"#).status == 200)
        let saved = try console.post("/api/settings/save", "{}")
        let kept = state + "/console-settings.toml"
        #expect(saved.status == 200 && saved.text.contains("saved to \(kept) instead") && saved.text.contains("sudoedit"), "\(saved.text)")
        let text = try String(contentsOfFile: kept, encoding: .utf8)
        #expect(text.contains("offset = 25\n"), "\(text)")
        // What it saved is a settings file sentry reads.
        let config = try SentryProcess(["config", "--config", kept])
        #expect(config.status == 0 && config.standardOutput.split(separator: "\n").contains { $0.hasPrefix("offset ") && $0.contains("25") })
    }

    @Test("off loopback the console needs a token (refused at start without one); requests without it get 401")
    func token() throws {
        let refused = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--web", "0.0.0.0:0"])
        #expect(refused.status != 0 && refused.standardError.contains("--web-token"))
        let console = try RunningConsole(["--web-token", "t0k3n"], web: "0.0.0.0:0")
        let port = console.port
        #expect(try HTTP.request(port: port, "GET", "/api/status").status == 401)
        #expect(try HTTP.request(port: port, "GET", "/api/status?token=t0k3n").status == 200)
        #expect(try HTTP.request(port: port, "POST", "/api/aim", body: #"{"action":"scan"}"#).status == 401)
        #expect(try HTTP.request(port: port, "GET", "/", headers: ["Authorization: Bearer t0k3n"]).status == 200)
        _ = console
        for bad in [
            ["--web", "99999"], ["--web", "localhost:80"], ["--web-token", "x"], ["--web", "8080", "--web-fps", "0"], ["--web", "8080", "--web-token", ""],
        ] {
            let run = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim"] + bad)
            #expect(run.status != 0 && run.standardError.contains("--web"), "\(bad): \(run.standardError)")
        }
        let busy = try RunningConsole()
        let second = try SentryProcess(["--camera", DemoClip.path, "--serial", "sim", "--web", "127.0.0.1:\(busy.port)", "--frames", "1"])
        #expect(second.status != 0 && second.standardError.contains("cannot listen"), "\(second.standardError)")
    }

    @Test("the stream is JPEG frames of the frame's size; a second viewer, one that vanishes and one that never reads do not slow the first or the frame rate")
    func viewers() throws {
        let console = try RunningConsole()
        let first = try MJPEGStream(port: console.port)
        #expect(eventually(within: 30) { first.count >= 25 }, "the first viewer got \(first.count) frames")
        let second = try MJPEGStream(port: console.port)
        let vanishing = try MJPEGStream(port: console.port)
        let stuck = try MJPEGStream(port: console.port, reading: false)
        #expect(eventually(within: 30) { vanishing.count >= 3 }, "the vanishing viewer got \(vanishing.count) frames")
        vanishing.abort()
        let countAt = first.count
        let since = monotonicSeconds()
        #expect(eventually(within: 30) { first.count >= countAt + 25 && second.count >= 25 }, "first \(first.count - countAt), second \(second.count)")
        // The stuck and the vanished viewer cost the first nothing: over the frames both live
        // viewers were sent, the first got what the second got (counts, not a clock; under
        // load the encoder may skip a frame, for both alike).
        // (Frame numbers start over as the clip loops, so the window is the second's parts
        // received meanwhile, less two at each edge, where the two reads may straddle it.)
        let firstIndices = Set(first.snapshot.dropFirst(countAt).map(\.index))
        let window = Set(second.snapshot.filter { $0.at >= since }.map(\.index).dropFirst(2).dropLast(2))
        let missed = window.subtracting(firstIndices)
        #expect(window.count >= 20 && missed.count <= max(2, window.count / 10), "the first missed \(missed.sorted()) of \(window.count)")
        for part in first.snapshot.suffix(5) {
            let info = try #require(JPEGHeader.read(part.jpeg))
            #expect(info.width == 640 && info.height == 480)
        }
        let indices = first.snapshot.map(\.index)
        #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 || $1 < 5 }, "frames out of order: \(indices)")
        close(stuck.fd)
        close(second.fd)
        close(first.fd)
        #expect(console.process.isRunning)
        #expect(console.stop() == 0)
    }
}

/// Debian's Chromium, headless, driven by tools/browser (DevTools protocol).
final class Browser {
    let process = Process()
    private let input = Pipe(), output = Pipe()
    private var pending: [UInt8] = []

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", DemoClip.repository.appendingPathComponent("tools/browser").path]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        _ = try next()
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    private func next() throws -> Any? {
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = Data(pending[..<newline])
                pending.removeFirst(newline + 1)
                let reply = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
                guard reply["ok"] as? Bool == true else { throw Failure(description: reply["error"] as? String ?? "browser failed") }
                return reply["value"]
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { throw Failure(description: "tools/browser ended") }
            pending += data
        }
    }

    @discardableResult
    func run(_ command: [String: Any]) throws -> Any? {
        var data = try JSONSerialization.data(withJSONObject: command)
        data.append(10)
        input.fileHandleForWriting.write(data)
        return try next()
    }

    func eval(_ script: String) throws -> Any? { try run(["eval": script]) }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

@Suite("the web console in a real browser (headless Chromium)", .serialized)
struct WebConsoleBrowserTests {
    /// The page's canvas and what it shows, once frozen.
    struct Shown {
        /// The video frame on the canvas, and the frame whose status the page drew over it: the
        /// nearest earlier one when that frame's status had not yet arrived (a loaded host).
        var frame: Int, status: Int
        var left: Double, top: Double, scale: Double
        var faces: [[String: Any]]
        var target: Int?
    }

    static func freeze(_ browser: Browser) throws -> Shown {
        // The page draws nothing once this is set, not even a frame it was decoding.
        _ = try browser.eval("window.sentry.freeze = true")
        let shown = try #require(try browser.eval("window.sentry.shown") as? [String: Any])
        let canvas = try #require(shown["canvas"] as? [String: Double])
        return Shown(
            frame: shown["frame"] as? Int ?? -1, status: shown["status"] as? Int ?? -1, left: canvas["left"]!, top: canvas["top"]!,
            scale: canvas["width"]! / Double(DemoClip.frameWidth), faces: shown["faces"] as? [[String: Any]] ?? [],
            target: shown["target"] as? Int)
    }

    /// The page as a PNG in the console's scratch directory; with SENTRY_UPDATE_SCREENSHOT
    /// set, also copied to `docs/NAME` (the pictures the docs show).
    static func screenshot(_ browser: Browser, of console: RunningConsole, keptAs name: String) throws -> String {
        let path = console.scratch.file(name).path
        try browser.run(["screenshot": path])
        if ProcessInfo.processInfo.environment["SENTRY_UPDATE_SCREENSHOT"] != nil {
            let docs = DemoClip.repository.appendingPathComponent("docs/\(name)").path
            try? FileManager.default.removeItem(atPath: docs)
            try FileManager.default.copyItem(atPath: path, toPath: docs)
        }
        return path
    }

    @Test("the page shows the video with the target box around the face's known position (screenshot in docs/)")
    func screenshot() throws {
        let console = try RunningConsole()
        let browser = try Browser()
        try browser.run(["open": "\(console.base)/", "width": 1280, "height": 900])
        try browser.run(["wait": "window.sentry.framesShown > 10", "timeout": 20])
        // A frame with the face well inside, then hold it still.
        try browser.run([
            "wait":
                "window.sentry.shown && window.sentry.shown.target !== null && window.sentry.shown.target !== undefined && (window.sentry.shown.frame % 100) > 12 && (window.sentry.shown.frame % 100) < 22",
            "timeout": 30,
        ])
        let shown = try Self.freeze(browser)
        let path = try Self.screenshot(browser, of: console, keptAs: "console.png")
        let time = Double(shown.frame % 100) / DemoClip.framesPerSecond
        let face = DemoClip.face(at: time)
        func screen(_ x: Double, _ y: Double) -> (Double, Double) { (shown.left + x * shown.scale, shown.top + y * shown.scale) }
        // The video is there: the canvas is a picture, not a flat fill.
        let whole = try #require(
            try browser.run(["pixels": path, "rect": [shown.left, shown.top, 640 * shown.scale, 480 * shown.scale]]) as? [String: Double])
        #expect(whole["deviation"]! > 20, "\(whole)")
        // The target box: red lines around the known face, none across its middle.
        let (x0, y0) = screen(face.x - 25, face.y - 25)
        let around = try #require(
            try browser.run([
                "pixels": path, "rect": [x0, y0, (face.width + 50) * shown.scale, (face.height + 50) * shown.scale],
                "rgb": [255, 60, 60], "tolerance": 50,
            ]) as? [String: Double])
        let (cx, cy) = screen(face.x + face.width * 0.3, face.y + face.height * 0.3)
        let middle = try #require(
            try browser.run([
                "pixels": path, "rect": [cx, cy, face.width * 0.4 * shown.scale, face.height * 0.4 * shown.scale],
                "rgb": [255, 60, 60], "tolerance": 50,
            ]) as? [String: Double])
        let side = face.x > 320 ? 20.0 : 460.0
        let (ox, oy) = screen(side, 300)
        let elsewhere = try #require(
            try browser.run([
                "pixels": path, "rect": [ox, oy, 150 * shown.scale, 150 * shown.scale],
                "rgb": [255, 60, 60], "tolerance": 50,
            ]) as? [String: Double])
        let perimeter = 2 * (face.width + face.height) * shown.scale
        #expect(around["near"]! > perimeter * 2, "red pixels around the face: \(around), frame \(shown.frame)")
        #expect(middle["near"]! == 0, "\(middle)")
        #expect(elsewhere["near"]! == 0, "\(elsewhere)")
        #expect(console.stop() == 0)
    }

    @Test("with --known the page names the target in its mode line, over the video and in the header, and lists the household under 'Never fire at'")
    func namesTheTarget() throws {
        // The demo's face is the astronaut's (NASA's photograph, public domain: Tests/Fixtures/photos), enrolled as eileen.
        let household = try ScratchDirectory("known")
        try FileManager.default.createDirectory(at: household.file("eileen"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png"), to: household.file("eileen/1.png"))
        let console = try RunningConsole(["--known", household.path])
        let browser = try Browser()
        try browser.run(["open": "\(console.base)/", "width": 1280, "height": 900])
        try browser.run(["wait": "document.getElementById('mode').textContent.includes(' · eileen')", "timeout": 40])
        try browser.run(["wait": "window.sentry.shown && window.sentry.shown.mode.includes(' · eileen')", "timeout": 20])
        let choices = try browser.eval("[...document.querySelectorAll('#setting-spare option')].map(o => o.value)") as? [String] ?? []
        #expect(choices.contains("eileen") && choices.contains("known") && choices.contains("smile"), "\(choices)")
        #expect(console.stop() == 0)
    }

    @Test("armed at a person walking across the range, the page draws where the turret waits for the shot (the lead point), ahead of the fire point along the walk, and where the last darts landed")
    func leadPoint() throws {
        let console = try RunningConsole(
            ["--fire", "--tilt", "--fov", "60", "--fire-cooldown", "1"], camera: "range:crossing-1:" + ShootingRangeRunTests.face)
        let browser = try Browser()
        try browser.run(["open": "\(console.base)/", "width": 1280, "height": 900])
        // Both points of one drawn frame, kept as the page drew them.
        try browser.run([
            "wait": "window.sentry.shown && window.sentry.shown.leadPoint && window.sentry.shown.firePoint && (window.leadSeen = [window.sentry.shown.leadPoint, window.sentry.shown.firePoint])",
            "timeout": 40,
        ])
        let points = try #require(try browser.eval("window.leadSeen") as? [[Double]])
        let (lead, fire) = (points[0], points[1])
        // About a third of a second of a 1 m/s walk ahead (100 pixels), at the fire point's height to within the tilt's whole degree.
        #expect(abs(lead[0] - fire[0]) > 10 && abs(lead[1] - fire[1]) < 30, "lead point \(lead), fire point \(fire)")
        // Then where the darts landed: a ring for each of the last, in the picture, most on the walker's torso.
        try browser.run(["wait": "window.sentry.shown && window.sentry.shown.darts && window.sentry.shown.darts.some(d => d.hit)", "timeout": 40])
        let darts = try #require(try browser.eval("window.sentry.shown.darts") as? [[String: Any]])
        for dart in darts {
            let (x, y) = (dart["x"] as? Double ?? -1, dart["y"] as? Double ?? -1)
            #expect(x >= 0 && x < 640 && y >= 0 && y < 480, "\(darts)")
        }
        #expect(console.stop() == 0)
    }

    @Test("with --expressions the page draws cartoon eyes over the subject's eyes: white, a pupil, inside the face (screenshot in docs/)")
    func cartoonEyes() throws {
        let console = try RunningConsole(["--expressions"])
        let browser = try Browser()
        try browser.run(["open": "\(console.base)/?view=eyes", "width": 1280, "height": 900])
        try browser.run([
            "wait":
                "window.sentry.shown && window.sentry.shown.eyes.length === 2 && (window.sentry.shown.status % 100) > 12 && (window.sentry.shown.status % 100) < 22",
            "timeout": 40,
        ])
        let shown = try Self.freeze(browser)
        let eyes = try #require(try browser.eval("window.sentry.shown.eyes") as? [[String: Any]])
        let path = try Self.screenshot(browser, of: console, keptAs: "console-eyes.png")
        // The eyes come from the status the page drew, which may be a frame behind the video's.
        let face = DemoClip.face(at: Double(shown.status % 100) / DemoClip.framesPerSecond)
        let drawn = eyes.compactMap { eye -> (x: Double, y: Double, r: Double)? in
            guard let x = eye["x"] as? Double, let y = eye["y"] as? Double, let r = eye["r"] as? Double, eye["closed"] as? Bool == false else { return nil }
            return (x, y, r)
        }
        #expect(drawn.count == 2, "\(eyes)")
        guard drawn.count == 2 else { return }
        // The subject's right eye first, on the image's left; both in the upper part of the face, level.
        #expect(drawn[0].x < drawn[1].x && abs(drawn[0].y - drawn[1].y) < 0.1 * face.width, "\(drawn), face \(face)")
        for eye in drawn {
            #expect(eye.x > face.x && eye.x < face.x + face.width && eye.y > face.y && eye.y < face.y + face.height * 0.6, "\(eye), face \(face)")
            #expect(eye.r > 0.05 * face.width && eye.r < 0.25 * face.width, "\(eye), face \(face)")
            // On screen: a white eye with a black pupil where the page says it drew one.
            let side = eye.r * shown.scale
            let rect = [shown.left + eye.x * shown.scale - side / 2, shown.top + eye.y * shown.scale - side / 2, side, side]
            let white = try #require(try browser.run(["pixels": path, "rect": rect, "rgb": [255, 255, 255], "tolerance": 30]) as? [String: Double])
            let black = try #require(try browser.run(["pixels": path, "rect": rect, "rgb": [0, 0, 0], "tolerance": 40]) as? [String: Double])
            #expect(white["near"]! > 0.2 * side * side && black["near"]! > 0.1 * side * side, "white \(white), black \(black)")
        }
        #expect(console.stop() == 0)
    }

    @Test(
        "with a token, the page opened from its ?token= link drops the token from its URL, keeps it out of every request's URL, and still streams video and events"
    )
    func tokenOutOfURLs() throws {
        let console = try RunningConsole(["--web-token", "t0k3n"])
        let browser = try Browser()
        try browser.run(["open": "\(console.base)/?token=t0k3n", "width": 1280, "height": 900])
        try browser.run([
            "wait":
                "window.sentry && window.sentry.framesShown > 5 && document.querySelectorAll('#log li').length > 0 && document.querySelectorAll('#settings input').length > 0",
            "timeout": 30,
        ])
        #expect(try browser.eval("location.href") as? String == "\(console.base)/")
        let urls = try #require(try browser.eval("JSON.stringify(performance.getEntriesByType('resource').map(e => e.name))") as? String)
        #expect(!urls.contains("token") && urls.contains("/api/settings"), "\(urls)")
        #expect(try browser.eval("document.cookie") as? String == "", "the cookie is HttpOnly")
        #expect(try HTTP.request(port: console.port, "GET", "/api/status").status == 401)
        #expect(console.stop() == 0)
    }

    @Test("on a phone's screen the settings are grouped and labelled with units, fit the width, and a choice made there reaches the run (screenshot in docs/)")
    func phoneSettings() throws {
        let console = try RunningConsole()
        let browser = try Browser()
        try browser.run(["open": "\(console.base)/", "width": 390, "height": 844])
        try browser.run(["wait": "document.getElementById('setting-search') !== null && window.sentry.framesShown > 2", "timeout": 30])
        let legends = try browser.eval("[...document.querySelectorAll('#settings legend')].map(l => l.textContent)") as? [String]
        #expect(legends == ["Aim", "Target", "Smoothing", "Lock and fire", "Detection", "Expressions", "Camera and mount"])
        let offset = try browser.eval(
            "(i => [i.labels[0].textContent, i.nextElementSibling.textContent, i.title])(document.getElementById('setting-offset'))") as? [String]
        #expect(offset?.prefix(2) == ["Clear of each end", "°"] && offset?.last?.contains("(--offset)") == true, "\(offset ?? [])")
        // Nothing wider than the screen: no sideways scrolling, every field inside it.
        let overflow = try browser.eval(
            "[document.documentElement.scrollWidth - innerWidth, ...[...document.querySelectorAll('#settings input, #settings select')].map(e => e.getBoundingClientRect().right - innerWidth)].filter(d => d > 0).length"
        ) as? Int
        #expect(overflow == 0)
        _ = try browser.eval("document.getElementById('settings').scrollIntoView()")
        _ = try Self.screenshot(browser, of: console, keptAs: "console-phone.png")
        _ = try browser.eval("(s => { s.value = 'hold'; s.dispatchEvent(new Event('change')); })(document.getElementById('setting-search'))")
        #expect(eventually(within: 10) { (try? console.status()["settings"] as? [String: Any])?["search"] as? String == "hold" })
        #expect(console.stop() == 0)
    }

    @Test(
        "at 1280x900 and 390x844 every setting has a group, a label and its flag; the tuning knobs are folded under advanced; a refused value shows the flag's message beside its field",
        arguments: [(1280, 900), (390, 844)])
    func settingsPanel(width: Int, height: Int) throws {
        let console = try RunningConsole()
        let browser = try Browser()
        try browser.run(["open": "\(console.base)/", "width": width, "height": height])
        try browser.run(["wait": "document.getElementById('setting-kp') !== null", "timeout": 30])
        let unplaced = try browser.eval(
            "[...document.querySelectorAll('#settings input, #settings select')].filter(i => !i.closest('fieldset').querySelector('legend').textContent || !i.labels[0].textContent || !i.title.includes('(--' + i.name + ')')).map(i => i.name)"
        ) as? [String]
        #expect(unplaced == [], "\(unplaced ?? [])")
        let folded = try browser.eval("[...document.querySelectorAll('#settings details.advanced:not([open]) [name]')].map(i => i.name).sort()") as? [String]
        #expect(
            folded == ["hysteresis", "kd", "ki", "kp", "smooth-beta", "smooth-cutoff", "switch-frames", "switch-margin", "trim-x", "trim-y"], "\(folded ?? [])")
        #expect(try browser.eval("document.getElementById('setting-offset').closest('details') === null") as? Bool == true)
        let before = try console.status()["settings"] as? [String: Any]
        _ = try browser.eval("(i => { i.value = '95'; i.dispatchEvent(new Event('change')); })(document.getElementById('setting-offset'))")
        try browser.run(["wait": "document.getElementById('refusal-offset') !== null", "timeout": 10])
        let refusal = try browser.eval(
            "(r => [r.textContent, r.previousElementSibling.previousElementSibling.id, document.getElementById('setting-offset').value])(document.getElementById('refusal-offset'))"
        ) as? [String]
        #expect(refusal?.first?.contains("--offset 95 must be between") == true && refusal?.dropFirst().first == "setting-offset" && refusal?.last == "95", "\(refusal ?? [])")
        #expect((try console.status()["settings"] as? [String: Any])?["offset"] as? Double == before?["offset"] as? Double)
        // A refused tuning knob opens its fold to show why.
        _ = try browser.eval("(i => { i.value = '7'; i.dispatchEvent(new Event('change')); })(document.getElementById('setting-kp'))")
        try browser.run(["wait": "document.getElementById('refusal-kp') !== null", "timeout": 10])
        #expect(try browser.eval("document.getElementById('setting-kp').closest('details').open") as? Bool == true)
        let overflow = try browser.eval(
            "[document.documentElement.scrollWidth - innerWidth, ...[...document.querySelectorAll('#settings *')].map(e => e.getBoundingClientRect().right - innerWidth)].filter(d => d > 0).length"
        ) as? Int
        #expect(overflow == 0)
        if width == 1280 {
            _ = try browser.eval("document.getElementById('settings').scrollIntoView()")
            _ = try Self.screenshot(browser, of: console, keptAs: "console-settings.png")
        }
        #expect(console.stop() == 0)
    }

    @Test("the page shows the fire point below the target's face: grey with the mode line Tracking while unarmed, red with ARMED · Shooting and the red ARMED banner when armed (screenshot in docs/)")
    func firePoint() throws {
        for armed in [false, true] {
            let console = try RunningConsole(["--lock-after", "3600"] + (armed ? ["--fire", "--tilt"] : []))
            let browser = try Browser()
            try browser.run(["open": "\(console.base)/", "width": 1280, "height": 900])
            try browser.run(["wait": "(s => s && s.firePoint && s.target !== null && s.target !== undefined)(window.sentry.shown)", "timeout": 20])
            let shown = try #require(
                try browser.eval("(s => { const f = s.faces[s.target]; return [f.x, f.y, f.w, f.h, s.firePoint[0], s.firePoint[1], s.mode]; })(window.sentry.shown)")
                    as? [Any])
            let face = shown.prefix(6).compactMap { ($0 as? NSNumber)?.doubleValue }
            try #require(face.count == 6, "\(shown)")
            #expect(abs(face[4] - (face[0] + face[2] / 2)) < 1 && abs(face[5] - min(face[1] + face[3] / 2 + 1.5 * face[3], 479)) < 1, "\(shown)")
            #expect(face[5] > face[1] + face[3], "below the face: \(shown)")
            #expect((shown[6] as? String)?.hasPrefix(armed ? "ARMED · Shooting — " : "Tracking — ") == true, "\(shown)")
            let banner = try browser.eval("(b => [b.hidden, b.getBoundingClientRect().height, getComputedStyle(b).backgroundColor])(document.getElementById('armedBanner'))") as? [Any]
            #expect((banner?[0] as? Bool) == !armed && ((banner?[1] as? NSNumber)?.doubleValue ?? 0 > 0) == armed, "banner: \(String(describing: banner))")
            let status = try HTTP.request(port: console.port, "GET", "/api/status")
            #expect(String(decoding: status.body, as: UTF8.self).contains("\"armed\":\(armed)"), "\(String(decoding: status.body, as: UTF8.self).prefix(300))")
            #expect(console.stop() == 0)
        }
    }

    @Test("an event kept while the page is open appears at the top of the history with its face's thumbnail; a click shows its whole frame (screenshot in docs/)")
    func history() throws {
        let console = try RunningConsole(["--events", try ScratchDirectory("web-events").file("events").path])
        let browser = try Browser()
        try browser.run(["open": "\(console.base)/", "width": 1280, "height": 1400])
        try browser.run(["wait": "window.sentry.framesShown > 2", "timeout": 20])
        // One the feed brought, its thumbnail decoded: the face crop, at least 128 px.
        try browser.run([
            "wait": "window.sentry.historyLive > 0 && (i => i && i.complete && i.naturalWidth >= 128)(document.querySelector('#history li img'))",
            "timeout": 30,
        ])
        let top = try #require(try browser.eval("(li => [li.dataset.id, li.querySelector('b').textContent])(document.querySelector('#history li'))") as? [String])
        let kept = try HTTP.request(port: console.port, "GET", "/api/history?limit=1")
        #expect(String(decoding: kept.body, as: UTF8.self).contains("\"id\":\"\(top[0])\""), "the page's newest is not the history's: \(top)")
        #expect(["arrive", "lock", "lost"].contains(top[1]), "\(top)")
        _ = try browser.eval("document.getElementById('historyPanel').scrollIntoView()")
        _ = try Self.screenshot(browser, of: console, keptAs: "console-history.png")
        _ = try browser.eval("document.querySelector('#history li').click()")
        try browser.run(["wait": "(d => d.open && d.querySelector('img').complete && d.querySelector('img').naturalWidth === 640)(document.getElementById('eventFrame'))", "timeout": 10])
        #expect(console.stop() == 0)
    }

    @Test("a click on the video aims the simulated servo at the clicked point; arrows nudge; A hands back to tracking")
    func click() throws {
        let (servo, console, browser) = try Self.consoleOnSimulatedServo()
        defer { servo.stop() }
        try browser.run(["wait": "window.sentry.framesShown > 3", "timeout": 20])
        let shown = try Self.freeze(browser)
        // A click lands on whole CSS pixels: aim where that pixel is in the frame.
        let click = ((shown.left + 160 * shown.scale).rounded(), (shown.top + 300 * shown.scale).rounded())
        try browser.run(["click": [click.0, click.1]])
        let point = (x: (click.0 - shown.left) / shown.scale, y: (click.1 - shown.top) / shown.scale)
        let expected = AngleMapper(offset: 40).aim(at: point, frameWidth: 640, frameHeight: 480).pan
        #expect(
            Self.waitFor(servo, pan: expected),
            "servo at \(servo.current.pan), expected \(expected); got \(String(decoding: servo.receivedBytes, as: UTF8.self).suffix(80)); \((try? console.status())?["mode"] ?? "")"
        )
        // The crosshair is drawn where the turret points: back on the clicked point, within a degree's pixels (640/100).
        _ = try browser.eval("window.sentry.freeze = false")
        try browser.run(["wait": "window.sentry.shown && window.sentry.shown.aim && Math.abs(window.sentry.shown.aim[0] - \(point.x)) < 6.4", "timeout": 10])
        try browser.run(["key": "ArrowRight"])
        #expect(Self.waitFor(servo, pan: expected + 2), "servo at \(servo.current.pan), expected \(expected + 2)")
        #expect(try console.status()["steering"] as? String == "manual")
        try browser.run(["key": "a"])
        try browser.run(["wait": "window.sentry.shown !== null", "timeout": 5])
        #expect(eventually(within: 5) { (try? console.status()["steering"] as? String) == "auto" })
    }

    @Test("centred by C, a trim typed under Aim's advanced settings moves the servo by it at once; the console still shows 90°")
    func trim() throws {
        let (servo, console, browser) = try Self.consoleOnSimulatedServo()
        defer { servo.stop() }
        try browser.run(["wait": "window.sentry.framesShown > 3 && document.getElementById('setting-trim-x') !== null", "timeout": 20])
        try browser.run(["key": "c"])
        #expect(Self.waitFor(servo, pan: 90), "servo at \(servo.current.pan)")
        _ = try browser.eval("document.getElementById('setting-trim-x').closest('details').open = true")
        try Self.type("4", intoSetting: "trim-x", in: browser)
        #expect(Self.waitFor(servo, pan: 94), "servo at \(servo.current.pan); got \(String(decoding: servo.receivedBytes, as: UTF8.self).suffix(40))")
        let status = try console.status()
        #expect((status["settings"] as? [String: Any])?["trim-x"] as? Double == 4)
        #expect((status["commanded"] as? [String: Any])?["pan"] as? Int == 90, "\(status["commanded"] ?? "none")")
    }

    /// sentry on a simulated servo's pty, its console open in the browser.
    static func consoleOnSimulatedServo() throws -> (SimulatedServo, RunningConsole, Browser) {
        let servo = try SimulatedServo()
        let console = try RunningConsole([], serial: servo.devicePath)
        let browser = try Browser()
        try browser.run(["open": "\(console.base)/", "width": 1280, "height": 900])
        return (servo, console, browser)
    }

    /// Clicks a setting's field, types `text` over its value and leaves the field, as a person does.
    static func type(_ text: String, intoSetting key: String, in browser: Browser) throws {
        let box = try #require(
            try browser.eval("(r => [r.left + r.width / 2, r.top + r.height / 2])(document.getElementById('setting-\(key)').getBoundingClientRect())")
                as? [Double])
        try browser.run(["click": box])
        _ = try browser.eval("document.getElementById('setting-\(key)').select()")
        try browser.run(["type": text])
        _ = try browser.eval("document.activeElement.blur()")
    }

    static func waitFor(_ servo: SimulatedServo, pan: Int) -> Bool {
        eventually(within: 5) { servo.current.pan == pan && !servo.current.isScanning }
    }

    @Test("typing a new offset in the page changes the next command sent for the face")
    func offset() throws {
        let (servo, console, browser) = try Self.consoleOnSimulatedServo()
        defer { servo.stop() }
        try browser.run(["wait": "document.getElementById('setting-offset') !== null", "timeout": 20])
        try Self.type("20", intoSetting: "offset", in: browser)
        var checked: (sent: String, expected: String)?
        // The change is taken between frames: judge a frame that began after it was accepted.
        var changedAt: Int?
        _ = eventually(within: 10) {
            guard let status = try? console.status() else { return false }
            let frame = status["frame"] as? Int ?? 0
            if changedAt == nil, (status["settings"] as? [String: Any])?["offset"] as? Double == 20 { changedAt = frame }
            if let changedAt, frame > changedAt + 1, let target = status["target"] as? Int,
                let faces = status["faces"] as? [[String: Any]], let sent = (status["commands"] as? [String])?.first(where: { $0.hasPrefix("X") })
            {
                let face = faces[target]
                let x = Double(face["x"] as! Int) + Double(face["w"] as! Int) / 2
                let y = Double(face["y"] as! Int) + Double(face["h"] as! Int) / 2
                let pan = AngleMapper(offset: 20).aim(at: (x, y), frameWidth: 640, frameHeight: 480).pan
                checked = (sent, "X\(pan).")
            }
            return checked != nil
        }
        let result = try #require(checked, "no command after the change")
        #expect(result.sent == result.expected)
        #expect(eventually(within: 5) { String(decoding: servo.receivedBytes, as: UTF8.self).contains(result.sent) })
        let error = try browser.eval("document.getElementById('error').textContent") as? String
        #expect(error == "")
    }
}

@Suite("the console and the relay against the user's own browser: rebinding, cross-site requests and WebSockets", .serialized)
struct CrossSiteTests {
    @Test("--web-allow-host lets a name in; any other name is refused on every route, once logged with the peer's address")
    func allowedHost() throws {
        let console = try RunningConsole(["--web-allow-host", "sentry.local"])
        #expect(try HTTP.request(port: console.port, "GET", "/api/status", headers: ["Host: sentry.local:\(console.port)"]).status == 200)
        for path in ["/", "/api/status", "/stream.mjpg", "/api/events"] {
            let reply = try HTTP.request(port: console.port, "GET", path, headers: ["Host: evil.example:\(console.port)"])
            #expect(reply.status == 403, "\(path)")
        }
        let offset = try console.status()["settings"].flatMap { ($0 as? [String: Any])?["offset"] as? Double }
        let refused = try HTTP.request(
            port: console.port, "POST", "/api/settings", body: #"{"offset": 33}"#,
            headers: ["Origin: http://evil.example", "Content-Type: text/plain"])
        #expect(refused.status == 403)
        #expect(try console.status()["settings"].flatMap { ($0 as? [String: Any])?["offset"] as? Double } == offset)
        #expect(console.stop() == 0)
        let refusals = console.log.split(separator: "\n").filter { $0.contains("refused 127.0.0.1:") }
        #expect(refusals.count == 2, "one line per kind (a foreign host, a foreign origin) within 10 s: \(refusals)")
        #expect(refusals.first?.contains("more like it") == false)
    }

    @Test("a WebSocket from another page is refused by the relay and nothing reaches the turret; no Origin or an allowed one connects")
    func relayOrigins() throws {
        let relay = try RunningRelay(["--allow-origin", "http://app.local:8000"])
        let refused = try relay.client(["--header", "Origin:http://evil.example", "text:X10."])
        #expect(refused == ["refused 403"], "\(refused)")
        #expect(relay.received(within: 0.3).isEmpty)
        #expect(try relay.client(["--header", "Origin:http://app.local:8000", "text:X11."]).first == "open")
        #expect(try relay.client(["text:X12."]).first == "open")
        let received = relay.received()
        #expect(received.contains("X11.") && received.contains("X12.") && !received.contains("X10."), "\(received)")
        #expect(relay.stop() == 0)
    }

    @Test("a page on another local port, in headless Chromium, tries the console's API and the relay's WebSocket: nothing changes, nothing moves")
    func hostilePage() throws {
        let relay = try RunningRelay()
        let console = try RunningConsole()
        let before = try console.status()["settings"].flatMap { ($0 as? [String: Any])?["offset"] as? Double }
        let page = """
            <!doctype html><title>evil</title><script>
            window.done = 0; window.results = [];
            const api = "http://127.0.0.1:\(console.port)";
            for (const [path, body, type] of [["/api/settings", '{"offset": 33}', "text/plain"], ["/api/aim", '{"action":"center"}', "text/plain"],
                                             ["/api/settings", '{"offset": 34}', "application/x-www-form-urlencoded"]]) {
              fetch(api + path, {method: "POST", mode: "no-cors", headers: {"Content-Type": type}, body})
                .then(() => results.push("fetch sent"), e => results.push("fetch failed")).finally(() => done++);
            }
            const socket = new WebSocket("ws://127.0.0.1:\(relay.port)/");
            socket.onopen = () => { socket.send("X10."); results.push("ws open"); setTimeout(() => socket.close(), 200); };
            socket.onclose = () => { results.push("ws closed"); done++; };
            </script>
            """
        let site = try ForeignSite(pages: ["evil.html": page])
        let browser = try Browser()
        #expect(site.open("evil.html", titled: "evil", in: browser))
        try browser.run(["wait": "window.done >= 4", "timeout": 10])
        let results = try browser.eval("window.results") as? [String] ?? []
        #expect(!results.contains("ws open"), "\(results)")
        #expect(relay.received(within: 0.3).isEmpty)
        #expect(try console.status()["settings"].flatMap { ($0 as? [String: Any])?["offset"] as? Double } == before)
        #expect(try console.status()["steering"] as? String == "auto")
        #expect(console.stop() == 0)
        #expect(relay.stop() == 0)
    }
}
