import CV4L2
import FoundationEssentials
import Glibc
import Imaging

/// A live V4L2 camera (`/dev/videoN`) through libv4l2, as a `FrameSource`.
///
/// Negotiates GREY, then YUYV, then YUV 4:2:0 (libv4l converts MJPEG and
/// others), at the supported size nearest the one asked for; streams through
/// a small ring of mmap buffers; and always hands out the newest frame:
/// older queued frames are put back unread and counted as dropped, so driver
/// queues never turn into lag.
public final class V4L2Camera: FrameSource {
    public let path: String
    public let width: Int
    public let height: Int
    public let framesPerSecond: Double
    public let fourcc: String
    /// Frames the driver captured that sentry skipped to stay on the newest.
    public private(set) var droppedFrames = 0
    /// Things worth telling the user once (e.g. a size that was not available).
    public let notes: [String]
    public var name: String { "\(path) (\(card))" }

    private let card: String
    private var fd: Int32
    private let bytesPerLine: Int
    private var buffers: [(start: UnsafeMutableRawPointer, length: Int)] = []
    private var image: GrayImage
    private var chroma: ChromaPlanes?
    public var keepsColour = false
    /// Whether the format it captures in has colour (YUYV, YU12, YV12, NV12).
    public var hasColour: Bool { chroma != nil }
    private var lastSequence: UInt32?
    private var firstTimestamp: Double?
    private var frameIndex = 0
    private let isCancelled: @Sendable () -> Bool

    static let bufferCount: UInt32 = 4
    /// How long to wait for a frame before calling the camera stalled.
    static let frameTimeout: Int32 = 5000

    public init(
        path: String, size: FrameSize? = nil, framesPerSecond requestedRate: Double? = nil,
        fourcc forcedFourcc: String? = nil, colour: Bool = false, controls: CameraControls = CameraControls(),
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws(VideoError) {
        self.path = path
        self.isCancelled = isCancelled
        let (fd, capabilities) = try Self.open(path)
        var owned = false
        defer { if !owned { v4l2_close(fd) } }

        card = capabilities.card
        let offered = Self.formats(fd: fd)
        let formats = forcedFourcc.map { forced in offered.filter { $0.fourcc == forced } } ?? offered
        guard let choice = FormatNegotiation.choose(from: formats, requested: size, colour: colour) else {
            let offered = offered.map(\.fourcc).joined(separator: ", ")
            throw VideoError(
                source: path, reason: "offers no format sentry can read (\(forcedFourcc.map { "\($0) asked; " } ?? "")has: \(offered))",
                hint: "use a UVC webcam, or pick one of its formats with --pixel-format")
        }
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        format.fmt.pix.width = UInt32(choice.size.width)
        format.fmt.pix.height = UInt32(choice.size.height)
        format.fmt.pix.pixelformat = UInt32(fourcc: choice.fourcc)
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try Self.ioctl(fd, SENTRY_VIDIOC_S_FMT, &format, path: path, what: "set format \(choice.fourcc) \(choice.size)")
        width = Int(format.fmt.pix.width)
        height = Int(format.fmt.pix.height)
        fourcc = String(fourcc: format.fmt.pix.pixelformat)
        bytesPerLine = max(Int(format.fmt.pix.bytesperline), fourcc == "YUYV" ? width * 2 : width)
        guard FormatNegotiation.preferredFourccs.contains(fourcc), width > 0, height > 0 else {
            throw VideoError(source: path, reason: "the driver switched to \(fourcc) \(width)x\(height)", hint: "try another --size")
        }
        var notes: [String] = []
        if let size, size != FrameSize(width: width, height: height) {
            notes.append("\(path) has no \(size); using the nearest size it offers, \(width)x\(height)")
        }
        let rate = Self.setRate(fd: fd, requestedRate)
        if let requestedRate, abs(rate - requestedRate) > 0.5 {
            notes.append("\(path) cannot run at \(requestedRate) fps; it runs at \(rate)")
        }
        framesPerSecond = rate
        self.notes = notes
        try controls.apply(fd: fd, path: path)
        image = GrayImage(width: width, height: height)
        let (lumaWidth, lumaHeight) = (width, height)
        // Limited range unless the driver says full (or JPEG's colour space, whose default is full).
        let quantization = format.fmt.pix.quantization, colourSpace = format.fmt.pix.colorspace
        let range: ChromaPlanes.Range =
            quantization == V4L2_QUANTIZATION_FULL_RANGE.rawValue
                || (quantization == V4L2_QUANTIZATION_DEFAULT.rawValue && colourSpace == V4L2_COLORSPACE_JPEG.rawValue) ? .full : .limited
        chroma = ChromaPlanes.layout(of: fourcc).map { ChromaPlanes(layout: $0, lumaWidth: lumaWidth, lumaHeight: lumaHeight, range: range) }
        self.fd = fd
        owned = true  // from here on, close() in deinit releases it
        try startStreaming()
    }

    deinit { close() }

    public func nextFrame() throws(VideoError) -> Frame? {
        guard fd >= 0 else { return nil }
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&pollfd, 1, Self.frameTimeout)
            if ready < 0 && errno == EINTR {
                if isCancelled() { return nil }
                continue
            }
            if pollfd.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { throw lost("the device is gone") }
            guard ready > 0 else { throw lost("no frame for \(Self.frameTimeout / 1000) s") }
            break
        }
        // Take every frame that is ready and keep only the newest.
        var newest: v4l2_buffer?
        while true {
            if newest != nil {
                // Only dequeue again when another frame is ready (libv4l2 complains on EAGAIN).
                var more = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&more, 1, 0) > 0, more.revents & Int16(POLLIN) != 0 else { break }
            }
            var buffer = v4l2_buffer()
            buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            buffer.memory = V4L2_MEMORY_MMAP.rawValue
            if sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_DQBUF, &buffer) != 0 {
                if errno == EAGAIN { break }
                if errno == EINTR { continue }
                throw lost("cannot take a frame (\(String(cString: strerror(errno))))")
            }
            if var older = newest {
                droppedFrames += 1
                _ = sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_QBUF, &older)
            }
            newest = buffer
        }
        guard var buffer = newest else { return try nextFrame() }
        if let last = lastSequence, buffer.sequence > last &+ 1 { droppedFrames += Int(buffer.sequence - last - 1) }
        lastSequence = buffer.sequence
        let mapped = buffers[Int(buffer.index)]
        let bytes = UnsafeRawBufferPointer(start: mapped.start, count: mapped.length)
        var complete = LumaExtraction.extract(fourcc: fourcc, from: bytes, bytesPerLine: bytesPerLine, into: &image)
        if keepsColour, chroma != nil {
            complete = complete && chroma!.extract(fourcc: fourcc, from: bytes, bytesPerLine: bytesPerLine, lumaHeight: height)
        }
        let time = Double(buffer.timestamp.tv_sec) + Double(buffer.timestamp.tv_usec) / 1e6
        _ = sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_QBUF, &buffer)
        guard complete else { throw lost("the driver returned a short buffer") }
        let start = firstTimestamp ?? time
        firstTimestamp = start
        defer { frameIndex += 1 }
        // The frame shares `image`'s pixels; once the caller lets go of it,
        // the next frame is written in place, with no allocation.
        return Frame(image: image, timestamp: time - start, index: frameIndex, chroma: keepsColour ? chroma : nil, capturedAt: Self.isMonotonic(buffer) ? time : nil)
    }

    /// The driver stamped the buffer on the monotonic clock (uvcvideo, vivid and
    /// most others do; `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC` says so), the one
    /// `monotonicSeconds()` reads, so the time to the wire is a difference.
    static func isMonotonic(_ buffer: v4l2_buffer) -> Bool {
        buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
    }

    /// Unplugged, it may be plugged back: the run waits for it.
    public var comesBack: Bool { true }

    public func close() {
        guard fd >= 0 else { return }
        var type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        _ = sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_STREAMOFF, &type)
        for buffer in buffers { v4l2_munmap(buffer.start, buffer.length) }
        buffers = []
        v4l2_close(fd)
        fd = -1
    }

    private func startStreaming() throws(VideoError) {
        var request = v4l2_requestbuffers()
        request.count = Self.bufferCount
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try Self.ioctl(fd, SENTRY_VIDIOC_REQBUFS, &request, path: path, what: "request buffers")
        guard request.count >= 2 else {
            throw VideoError(source: path, reason: "the driver gave \(request.count) buffers", hint: "close other programs using the camera")
        }
        for index in 0..<request.count {
            var buffer = v4l2_buffer()
            buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            buffer.memory = V4L2_MEMORY_MMAP.rawValue
            buffer.index = index
            try Self.ioctl(fd, SENTRY_VIDIOC_QUERYBUF, &buffer, path: path, what: "query buffer")
            guard let start = v4l2_mmap(nil, Int(buffer.length), PROT_READ | PROT_WRITE, MAP_SHARED, fd, Int64(buffer.m.offset)),
                start != MAP_FAILED
            else {
                throw VideoError(source: path, reason: "cannot map buffer \(index)", hint: "try a smaller --size")
            }
            buffers.append((start, Int(buffer.length)))
            try Self.ioctl(fd, SENTRY_VIDIOC_QBUF, &buffer, path: path, what: "queue buffer")
        }
        var type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        try Self.ioctl(fd, SENTRY_VIDIOC_STREAMON, &type, path: path, what: "start streaming")
    }

    private func lost(_ reason: String) -> VideoError {
        VideoError(source: path, reason: reason, hint: "check the camera's cable; sentry waits for it to come back")
    }

    // MARK: - Queries

    struct Capabilities {
        var driver: String
        var card: String
    }

    /// What QUERYCAP says, if the node can capture and stream video.
    static func capabilities(_ caps: v4l2_capability, path: String) throws(VideoError) -> Capabilities {
        let flags = caps.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? caps.device_caps : caps.capabilities
        guard flags & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 else {
            throw VideoError(
                source: path, reason: "not a capture device (an output or metadata node?)", hint: "pass the camera's capture node; `sentry devices` lists them")
        }
        guard flags & UInt32(V4L2_CAP_STREAMING) != 0 else {
            throw VideoError(source: path, reason: "cannot stream (no V4L2 streaming I/O)", hint: "use a UVC webcam")
        }
        return Capabilities(driver: text(caps.driver), card: text(caps.card))
    }

    /// The capture formats and their sizes, as the device (and libv4l) answer.
    static func formats(fd: Int32) -> [CameraFormat] {
        var formats: [CameraFormat] = []
        var description = v4l2_fmtdesc()
        description.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        while sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_ENUM_FMT, &description) == 0 {
            let emulated = description.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0
            formats.append(
                CameraFormat(
                    fourcc: String(fourcc: description.pixelformat), emulated: emulated,
                    sizes: sizes(fd: fd, pixelFormat: description.pixelformat)))
            description.index += 1
        }
        return formats
    }

    static func sizes(fd: Int32, pixelFormat: UInt32) -> FrameSizes {
        var query = v4l2_frmsizeenum()
        query.pixel_format = pixelFormat
        var list: [FrameSize] = []
        while sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_ENUM_FRAMESIZES, &query) == 0 {
            if query.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                list.append(FrameSize(width: Int(query.discrete.width), height: Int(query.discrete.height)))
            } else {
                let s = query.stepwise
                return .stepwise(
                    min: FrameSize(width: Int(s.min_width), height: Int(s.min_height)),
                    max: FrameSize(width: Int(s.max_width), height: Int(s.max_height)),
                    step: FrameSize(width: Int(max(1, s.step_width)), height: Int(max(1, s.step_height))))
            }
            query.index += 1
        }
        return .discrete(list)
    }

    /// Sets the frame rate when asked, and returns the one in force.
    static func setRate(fd: Int32, _ requested: Double?) -> Double {
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        if let requested, requested > 0 {
            parameters.parm.capture.timeperframe = v4l2_fract(numerator: 1000, denominator: UInt32(requested * 1000))
            _ = sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_S_PARM, &parameters)
        }
        guard sentry_v4l2_ioctl(fd, SENTRY_VIDIOC_G_PARM, &parameters) == 0 else { return 0 }
        let frame = parameters.parm.capture.timeperframe
        return frame.numerator > 0 ? Double(frame.denominator) / Double(frame.numerator) : 0
    }

    static func ioctl<T>(_ fd: Int32, _ request: UInt, _ argument: inout T, path: String, what: String) throws(VideoError) {
        guard withUnsafeMutableBytes(of: &argument, { sentry_v4l2_ioctl(fd, request, $0.baseAddress) }) == 0 else {
            let code = errno
            if code == EBUSY { throw openError(path: path, errno: EBUSY) }
            throw VideoError(source: path, reason: "cannot \(what) (\(String(cString: strerror(code))))", hint: "try another --size or --pixel-format")
        }
    }

    /// Opens the node, checks it is a V4L2 capture device (asking the driver
    /// itself: libv4l2 prints its own complaints), then hands it to libv4l2.
    static func open(_ path: String) throws(VideoError) -> (fd: Int32, capabilities: Capabilities) {
        let fd = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw openError(path: path, errno: errno) }
        var caps = v4l2_capability()
        let capabilities: Capabilities
        do throws(VideoError) {
            guard sentry_ioctl(fd, SENTRY_VIDIOC_QUERYCAP, &caps) == 0 else {
                throw VideoError(
                    source: path, reason: "not a V4L2 video device", hint: "pass a camera such as /dev/video0 (see `sentry devices`) or a video file")
            }
            capabilities = try Self.capabilities(caps, path: path)
            // Another program streaming from the device refuses any format change:
            // ask the driver with its own format, before libv4l2 (which would print
            // a complaint of its own on stderr).
            var format = v4l2_format()
            format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            if sentry_ioctl(fd, SENTRY_VIDIOC_G_FMT, &format) == 0, sentry_ioctl(fd, SENTRY_VIDIOC_S_FMT, &format) != 0, errno == EBUSY {
                throw openError(path: path, errno: EBUSY)
            }
            guard sentry_v4l2_fd_open(fd) >= 0 else { throw openError(path: path, errno: errno) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return (fd, capabilities)
    }

    static func openError(path: String, errno code: Int32) -> VideoError {
        switch code {
        case ENOENT, ENODEV, ENXIO:
            VideoError(source: path, reason: "no such device", hint: "plug in the camera; `sentry devices` lists the cameras there are")
        case EACCES, EPERM:
            VideoError(source: path, reason: "permission denied", hint: "add yourself to the video group (sudo usermod -aG video $USER) and log in again")
        case EBUSY:
            VideoError(
                source: path, reason: "device is busy: another program holds it",
                hint: "close the other program (a browser, a video call, another sentry) and try again")
        default:
            VideoError(source: path, reason: "cannot open (\(String(cString: strerror(code))))", hint: "pass a camera such as /dev/video0 or a video file")
        }
    }

    static func text<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

extension V4L2Camera {
    /// What `sentry devices` shows about a camera.
    public struct Description: Sendable {
        public var path: String
        public var card: String
        public var driver: String
        public var formats: [CameraFormat]
        public var controls: [CameraControls.Control]
    }

    /// Describes a capture device without streaming from it; `nil` for nodes
    /// that are not capture devices.
    public static func describe(_ path: String) -> Description? {
        guard let (fd, caps) = try? open(path) else { return nil }
        defer { v4l2_close(fd) }
        return Description(
            path: path, card: caps.card, driver: caps.driver, formats: formats(fd: fd),
            controls: CameraControls.available(fd: fd))
    }
}
