import Foundation

/// Clips made by ffmpeg, once per checkout (`ClipCache`).
public enum Clips {
    /// The clip `name` made by ffmpeg from `arguments` with `codec`: uncompressed
    /// YUV4MPEG unless a test wants a camera's compression (or a picture). Every play
    /// of a compressed clip decodes it again: the demo clip's lossless FFV1 cost
    /// 2.3 ms of CPU a frame, more than a third of what sentry does with the frame.
    public static func make(_ name: String, _ arguments: [String], codec: [String] = ["-f", "yuv4mpegpipe"]) -> String {
        ClipCache.clip(name, command: ClipCache.ffmpeg + arguments + codec)
    }

    /// `make`'s clip, played from a copy decoded once (YUV4MPEG, the same frames
    /// byte for byte): for clips with a camera's compression, whose every play
    /// decoded H.264 again (1.6 s of CPU for 6 s at 640x480, and a suite plays each
    /// a dozen times).
    public static func makeDecoded(_ name: String, _ arguments: [String], codec: [String]) -> String {
        ClipCache.decoded(make(name, arguments, codec: codec))
    }

    /// The demo clip mirrored: the face leaves on the right.
    public static let mirrored = make("demo-mirrored.y4m", ["-i", DemoClip.path, "-vf", "hflip"])

    /// Two heads of about the same size crossing for 6 s at 10 fps: A (top,
    /// 150x170) moves right from x = 20, B (bottom, 4 % larger each way, so
    /// 8 % more area) moves left from x = 470.
    public static let crossing = make(
        "crossing.y4m",
        astronautOnGray(
            seconds: 6,
            ",split[a][b];[b]scale=156:177[b2];[0][a]overlay=x='20+80*t':y=10[o1];[o1][b2]overlay=x='470-80*t':y=260,format=gray"))

    /// Obama's portrait beside Biden's photo at 0.7 of its size, 1280x640: two faces, Obama's the
    /// larger (Tests/Fixtures/people, public domain White House photographs).
    public static let obamaBesideBiden: String = {
        let people = DemoClip.repository.appendingPathComponent("Tests/Fixtures/people")
        return make(
            "obama-beside-biden.jpg",
            [
                "-i", people.appendingPathComponent("obama/portrait.jpg").path, "-i", people.appendingPathComponent("biden/blue-room.jpg").path,
                "-filter_complex", "[1]scale=-2:448,pad=iw:640:0:96[b];[0][b]hstack",
            ], codec: ["-frames:v", "1"])
    }()

    /// Nobody there: plain gray, 640x480 at 10 fps for 2 s.
    public static let nobody = make("nobody.y4m", ["-f", "lavfi", "-i", "color=c=0x808080:s=640x480:r=10:d=2", "-vf", "format=gray"])
}

extension Clips {
    /// The astronaut's face (150x170, centred at 320,240) on gray, 640x480 at
    /// 10 fps for 5 s: in view from 0 to 1.5 s and from 2.5 to 4 s.
    public static let comesAndGoes = make(
        "comes-and-goes.y4m",
        astronautOnGray(seconds: 5, "[a];[0][a]overlay=x=245:y=155:enable='between(t,0,1.5)+between(t,2.5,4)',format=gray"))

    /// The astronaut's face as in `comesAndGoes`, in view from 0.5 to 3.5 s of 6 s: played in a
    /// loop, a visit every 6 s after an empty room of 3 s (each an arrival, a lock, a held smile, a loss).
    public static let visits = make(
        "visits.y4m", astronautOnGray(seconds: 6, "[a];[0][a]overlay=x=245:y=155:enable='between(t,0.5,3.5)',format=gray"))

    /// The astronaut's face (320x320, still, smiling) on gray at 30 fps for 3 s,
    /// her left eye shut from 1 s to 2 s (`astronaut-wink.png`, made by
    /// tools/facemesh_reference.py): a wink, on frames 30 to 59.
    public static let wink = make(
        "wink.y4m",
        [
            "-f", "lavfi", "-i", "color=c=0x808080:s=640x480:r=30:d=3",
            "-i", DemoClip.repository.appendingPathComponent("Tests/Fixtures/facemesh-frames/astronaut-face.png").path,
            "-i", DemoClip.repository.appendingPathComponent("Tests/Fixtures/facemesh-frames/astronaut-wink.png").path,
            "-filter_complex", "[0][1]overlay=x=160:y=80[o];[o][2]overlay=x=160:y=80:enable='between(t,1,1.99)',format=gray",
        ])

    /// ffmpeg's arguments for clips of the astronaut's face on plain gray, 640x480
    /// at 10 fps: `graph` goes on from the face (input 1, cropped to 150x170) and
    /// lays it over the gray (input 0).
    private static func astronautOnGray(seconds: Int, _ graph: String) -> [String] {
        [
            "-f", "lavfi", "-i", "color=c=0x808080:s=640x480:r=10:d=\(seconds)",
            "-i", DemoClip.repository.appendingPathComponent("Tests/Fixtures/photos/astronaut.png").path,
            "-filter_complex", "[1]format=gray,crop=150:170:150:20" + graph,
        ]
    }
}
