import Imaging
import Testing
import Video

/// Answers recorded from real drivers' VIDIOC_ENUM_FMT / ENUM_FRAMESIZES.
enum RecordedDevices {
    /// A Logitech C270 (uvcvideo) through libv4l2: YUYV and MJPG native, the rest emulated.
    static let uvcWebcam: [CameraFormat] = [
        CameraFormat(
            fourcc: "YUYV",
            sizes: .discrete([
                .init(width: 640, height: 480), .init(width: 160, height: 120),
                .init(width: 320, height: 240), .init(width: 1280, height: 720),
            ])),
        CameraFormat(fourcc: "MJPG", sizes: .discrete([.init(width: 640, height: 480), .init(width: 1280, height: 960)])),
        CameraFormat(fourcc: "RGB3", emulated: true, sizes: .discrete([.init(width: 640, height: 480)])),
        CameraFormat(fourcc: "YU12", emulated: true, sizes: .discrete([.init(width: 640, height: 480), .init(width: 1280, height: 960)])),
    ]
    /// vivid's webcam input.
    static let vivid: [CameraFormat] = [
        CameraFormat(
            fourcc: "YUYV",
            sizes: .discrete([
                .init(width: 320, height: 180), .init(width: 640, height: 360),
                .init(width: 640, height: 480), .init(width: 1280, height: 720),
            ])),
        CameraFormat(
            fourcc: "GREY",
            sizes: .discrete([
                .init(width: 320, height: 180), .init(width: 640, height: 360),
                .init(width: 640, height: 480), .init(width: 1280, height: 720),
            ])),
    ]
    /// An MJPEG-only camera: only libv4l's conversion gives luma.
    static let mjpegOnly: [CameraFormat] = [
        CameraFormat(fourcc: "MJPG", sizes: .discrete([.init(width: 1920, height: 1080)])),
        CameraFormat(fourcc: "YU12", emulated: true, sizes: .discrete([.init(width: 1920, height: 1080), .init(width: 640, height: 360)])),
    ]
    /// A stepwise sensor (e.g. a Raspberry Pi camera through bcm2835-v4l2).
    static let stepwise: [CameraFormat] = [
        CameraFormat(
            fourcc: "YU12",
            sizes: .stepwise(
                min: .init(width: 32, height: 32), max: .init(width: 2592, height: 1944),
                step: .init(width: 2, height: 2)))
    ]
    /// Nothing sentry can read.
    static let bayerOnly: [CameraFormat] = [CameraFormat(fourcc: "BA81", sizes: .discrete([.init(width: 640, height: 480)]))]
}

@Suite("Format negotiation and nearest size over recorded device answers")
struct FormatNegotiationTests {
    @Test("fourcc codes read as text: printable always, the big-endian flag as -BE")
    func fourccText() {
        #expect(String(fourcc: UInt32(fourcc: "YUYV")) == "YUYV")
        #expect(String(fourcc: UInt32(fourcc: "Y16")) == "Y16")
        #expect(String(fourcc: UInt32(fourcc: "Y16") | 0x8000_0000) == "Y16-BE")
        #expect(String(fourcc: 0x0001_4142) == "BA??")
    }

    @Test("GREY wins over YUYV when both are offered")
    func greyFirst() {
        #expect(FormatNegotiation.choose(from: RecordedDevices.vivid, requested: nil) == FormatChoice(fourcc: "GREY", size: .init(width: 640, height: 480)))
    }

    @Test("a webcam without GREY streams YUYV, its own format, over an emulated one")
    func yuyvOverEmulated() {
        #expect(
            FormatNegotiation.choose(from: RecordedDevices.uvcWebcam, requested: .init(width: 1280, height: 720))
                == FormatChoice(fourcc: "YUYV", size: .init(width: 1280, height: 720)))
    }

    @Test("an MJPEG-only camera goes through libv4l's YUV 4:2:0")
    func mjpegThroughLibv4l() {
        #expect(
            FormatNegotiation.choose(from: RecordedDevices.mjpegOnly, requested: .init(width: 640, height: 480))
                == FormatChoice(fourcc: "YU12", size: .init(width: 640, height: 360)))
    }

    @Test(
        "the nearest discrete size is chosen",
        arguments: [
            (FrameSize(width: 600, height: 400), FrameSize(width: 640, height: 360)),
            (FrameSize(width: 640, height: 480), FrameSize(width: 640, height: 480)),
            (FrameSize(width: 100, height: 100), FrameSize(width: 320, height: 180)),
            (FrameSize(width: 4000, height: 3000), FrameSize(width: 1280, height: 720)),
        ])
    func nearestDiscrete(requested: FrameSize, expected: FrameSize) {
        #expect(FormatNegotiation.choose(from: RecordedDevices.vivid, requested: requested)?.size == expected)
    }

    @Test("stepwise sizes are clamped and aligned to the step")
    func stepwise() {
        #expect(FormatNegotiation.choose(from: RecordedDevices.stepwise, requested: .init(width: 641, height: 481))?.size == .init(width: 640, height: 480))
        #expect(FormatNegotiation.choose(from: RecordedDevices.stepwise, requested: .init(width: 8, height: 8))?.size == .init(width: 32, height: 32))
        #expect(FormatNegotiation.choose(from: RecordedDevices.stepwise, requested: .init(width: 9000, height: 9000))?.size == .init(width: 2592, height: 1944))
    }

    @Test("a camera with no usable format gives no choice")
    func nothingUsable() {
        #expect(FormatNegotiation.choose(from: RecordedDevices.bayerOnly, requested: nil) == nil)
    }

    @Test("fourcc codes convert both ways")
    func fourccs() {
        #expect(UInt32(fourcc: "YUYV") == 0x5659_5559)
        #expect(String(fourcc: 0x5659_5559) == "YUYV")
        #expect(String(fourcc: UInt32(fourcc: "GREY")) == "GREY")
    }
}
