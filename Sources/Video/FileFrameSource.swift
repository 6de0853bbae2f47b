import ChildProcesses
import FoundationEssentials
import Imaging
import SystemPackage

/// Frames from a video file or still image, decoded to 8-bit gray by an
/// `ffmpeg` subprocess writing YUV4MPEG (`-f yuv4mpegpipe -pix_fmt gray`):
/// its header carries the size and frame rate, so no `ffprobe` has to run
/// first (one process start less, ~90 ms sooner to the first frame). In
/// colour (`colour`, for the networks) it is 4:2:0 in full range instead,
/// whose luma is exactly that gray.
///
/// Frames come as fast as they decode, or at the file's own rate with
/// `realtime`. Timestamps follow the file's frame rate either way, so a file
/// gives the same result however fast the machine is.
public final class FileFrameSource: FrameSource {
    public let path: String
    public let width: Int
    public let height: Int
    public let framesPerSecond: Double
    public var name: String { URL(fileURLWithPath: path).lastPathComponent }

    private let process: ChildProcess
    /// Our ends of ffmpeg's standard output (the stream) and error (its complaints).
    private let output: FileDescriptor
    private let errors: FileDescriptor
    private var frameIndex = 0
    private var closed = false
    private let isCancelled: @Sendable () -> Bool
    private var buffer: [UInt8]
    /// The frame's colour, when opened in colour.
    private var chroma: ChromaPlanes?
    /// Deliver the colour with each frame (only a source opened in colour has any).
    public var keepsColour = true
    public var hasColour: Bool { chroma != nil }
    /// The "FRAME\n" line before each frame.
    private var marker = [UInt8](repeating: 0, count: 6)

    /// Frames from the file at `path` (see `init`): a JPEG or PNG photo taken as it is
    /// (no `size`, no `loop`) decoded in process (`StillImage`), anything else by ffmpeg.
    public static func open(
        path: String, size: FrameSize? = nil, realtime: Bool = false, loop: Bool = false, colour: Bool = false,
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws(VideoError) -> any FrameSource {
        if size == nil, !loop, let still = StillImage.open(path: path, colour: colour) { return still }
        return try FileFrameSource(path: path, size: size, realtime: realtime, loop: loop, colour: colour, isCancelled: isCancelled)
    }

    /// Opens `path`; `size` rescales frames, `realtime` paces them at the
    /// file's frame rate, `loop` plays the file again at its end, `colour`
    /// decodes the colour too. `isCancelled` is asked when a signal interrupts
    /// a wait for a frame: true ends the stream there.
    public init(
        path: String, size: FrameSize? = nil, realtime: Bool = false, loop: Bool = false, colour: Bool = false,
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws(VideoError) {
        self.path = path
        self.isCancelled = isCancelled
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw VideoError(source: path, reason: "no such file or device", hint: "pass a video file, an image or a camera such as /dev/video0")
        }
        guard !isDirectory else {
            throw VideoError(source: path, reason: "is a directory", hint: "pass a video file, an image or a camera such as /dev/video0")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw VideoError(source: path, reason: "permission denied", hint: "make the file readable (chmod a+r)")
        }
        var arguments = ["-nostdin", "-v", "error"]
        if realtime { arguments.append("-re") }
        // A picture is one frame to ffmpeg's image2 demuxer, which -stream_loop does not replay
        // (ffmpeg 5.1: a JPEG gave one frame); its own -loop repeats it.
        if loop { arguments += StillImage.isPicture(path) ? ["-loop", "1"] : ["-stream_loop", "-1"] }
        arguments += ["-i", path, "-map", "0:v:0"]
        // Full range: the luma of 4:2:0 is then byte for byte ffmpeg's gray.
        let scale = [size.map { "\($0.width):\($0.height)" }, colour ? "out_range=full" : nil].compactMap { $0 }
        if !scale.isEmpty { arguments += ["-vf", "scale=" + scale.joined(separator: ":")] }
        arguments += ["-f", "yuv4mpegpipe", "-pix_fmt", colour ? "yuv420p" : "gray", "-"]
        (process, output, errors) = try Self.start("ffmpeg", arguments, source: path)
        let header: StreamHeader
        do {
            header = try Self.readHeader(output, source: path, colour: colour)
        } catch {
            // Our end closed first, so an ffmpeg still writing ends too; its errors read before waiting, so a
            // full error pipe cannot hold it up.
            try? output.close()
            let lines = String(decoding: Self.readToEnd(errors), as: UTF8.self).split(separator: "\n")
            try? errors.close()
            process.wait()
            // ffmpeg's own words, not a demuxer's "[mov @ 0x…]" detail before them.
            let detail = (lines.first { !$0.hasPrefix("[") } ?? lines.last).map { String($0.suffix(120)) } ?? error.reason
            throw VideoError(
                source: path, reason: "not a video or image ffmpeg can decode (\(detail))", hint: "pass a video or image file that ffmpeg can play")
        }
        (width, height, framesPerSecond) = (header.width, header.height, header.framesPerSecond)
        buffer = [UInt8](repeating: 0, count: width * height)
        if colour { chroma = ChromaPlanes(layout: .halfBoth, lumaWidth: width, lumaHeight: height, range: .full) }
    }

    /// What a YUV4MPEG stream header says.
    struct StreamHeader {
        var width: Int
        var height: Int
        var framesPerSecond: Double
    }

    /// Reads one line (without its newline) from `fd`, a byte at a time; nil at the end or past `limit` bytes.
    private static func readLine(_ fd: FileDescriptor, limit: Int = 1024) -> [UInt8]? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count <= limit {
            guard (try? withUnsafeMutableBytes(of: &byte, { try fd.read(into: $0) })) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return line }
            line.append(byte)
        }
        return nil
    }

    /// All that is left to read from `fd` (ffmpeg's errors, once it has ended or is ending).
    private static func readToEnd(_ fd: FileDescriptor) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while let count = try? chunk.withUnsafeMutableBytes({ try fd.read(into: $0) }), count > 0 {
            bytes += chunk[..<count]
        }
        return bytes
    }

    /// `YUV4MPEG2 W640 H480 F30:1 … Cmono`: the size, the rate, and one gray plane per frame
    /// (`C420jpeg` or `C420mpeg2` and three planes, in `colour`).
    static func readHeader(_ fd: FileDescriptor, source: String, colour: Bool = false) throws(VideoError) -> StreamHeader {
        guard let line = readLine(fd) else {
            throw VideoError(source: source, reason: "no picture in it", hint: "pass a video or image file that ffmpeg can play")
        }
        let fields = String(decoding: line, as: UTF8.self).split(separator: " ")
        guard fields.first == "YUV4MPEG2" else {
            throw VideoError(source: source, reason: "ffmpeg's output is not YUV4MPEG", hint: "install Debian's ffmpeg")
        }
        func field(_ tag: Character) -> Substring? { fields.first { $0.first == tag }?.dropFirst() }
        guard let width = field("W").flatMap({ Int($0) }), let height = field("H").flatMap({ Int($0) }), width > 0, height > 0,
            (field("C") ?? "mono").hasPrefix(colour ? "420" : "mono")
        else {
            throw VideoError(source: source, reason: "ffmpeg's stream header is \(fields.joined(separator: " ").prefix(80))", hint: "install Debian's ffmpeg")
        }
        let rate = field("F").map { $0.split(separator: ":") }.flatMap { parts -> Double? in
            guard parts.count == 2, let n = Double(parts[0]), let d = Double(parts[1]), n > 0, d > 0 else { return nil }
            return n / d
        }
        return StreamHeader(width: width, height: height, framesPerSecond: rate ?? 0)
    }

    /// Starts one of ffmpeg's tools with its output and errors on pipes; our ends of them.
    private static func start(_ tool: String, _ arguments: [String], source: String) throws(VideoError)
        -> (ChildProcess, output: FileDescriptor, errors: FileDescriptor)
    {
        do {
            let output = try FileDescriptor.pipe(options: .closeOnExec), errors = try FileDescriptor.pipe(options: .closeOnExec)
            do {
                let process = try ChildProcess(tool, arguments: arguments, output: .descriptor(output.writeEnd), error: .descriptor(errors.writeEnd))
                return (process, output.readEnd, errors.readEnd)
            } catch {
                try? output.readEnd.close()
                try? errors.readEnd.close()
                throw VideoError(source: source, reason: "cannot start \(tool) (\(error))", hint: "install it: sudo apt-get install ffmpeg")
            }
        } catch let error as VideoError {
            throw error
        } catch {
            throw VideoError(source: source, reason: "cannot make a pipe for \(tool) (\(error))", hint: "close some files or raise the limit (ulimit -n)")
        }
    }

    deinit { close() }

    public func nextFrame() throws(VideoError) -> Frame? {
        guard !closed else { return nil }
        // Each frame: a "FRAME" line (ffmpeg writes it bare), then the gray plane into `buffer`.
        let count = width * height
        let complete: Bool
        switch readFully(count: 6, into: &marker) {
        case .cancelled: return nil
        case .ended: complete = false
        case .read:
            guard marker.elementsEqual("FRAME\n".utf8) else {
                throw VideoError(source: path, reason: "ffmpeg's stream lost its frame markers", hint: "install Debian's ffmpeg")
            }
            switch readFully(count: count, into: &buffer) {
            case .cancelled: return nil
            case .ended: complete = false
            case .read:
                // A stop during the colour planes is a stop, not the stream's end: taken as an end,
                // the wait below would wait for an ffmpeg blocked writing to a pipe nobody reads.
                switch readChroma() {
                case .cancelled: return nil
                case .ended: complete = false
                case .read: complete = true
                }
            }
        }
        if !complete {
            // An exit status other than 0 is ffmpeg failing on its own; a signal is sentry stopping it.
            // Its end comes within seconds once its output ended; an ffmpeg still there then is stopped.
            let ending = process.wait(timeout: .seconds(5)) ?? process.stop()
            let failed: Bool = if case .exited(let code) = ending, code != 0 { true } else { false }
            if frameIndex == 0 || failed {
                let message =
                    String(decoding: Self.readToEnd(errors), as: UTF8.self)
                    .split(separator: "\n").first.map(String.init) ?? "no frames"
                throw VideoError(source: path, reason: "ffmpeg cannot decode it (\(message))", hint: "pass a video or image file that ffmpeg can play")
            }
            return nil
        }
        defer { frameIndex += 1 }
        let rate = framesPerSecond > 0 ? framesPerSecond : 25
        return Frame(
            image: GrayImage(width: width, height: height, pixels: buffer),
            timestamp: Double(frameIndex) / rate, index: frameIndex, chroma: keepsColour ? chroma : nil)
    }

    /// The two chroma planes after the luma; false if the stream ended in them.
    private func readChroma() -> ReadOutcome {
        guard var planes = chroma else { return .read }
        chroma = nil  // not shared while it is written: no copy
        defer { chroma = planes }
        let count = planes.width * planes.height
        let u = readFully(count: count, into: &planes.u)
        return u == .read ? readFully(count: count, into: &planes.v) : u
    }

    private enum ReadOutcome { case read, ended, cancelled }

    /// Reads exactly `count` bytes from ffmpeg into the start of `bytes`.
    private func readFully(count: Int, into bytes: inout [UInt8]) -> ReadOutcome {
        var filled = 0
        while filled < count {
            do {
                let n = try bytes.withUnsafeMutableBytes {
                    try output.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled..<count]), retryOnInterrupt: false)
                }
                if n == 0 { return .ended }
                filled += n
            } catch let error as Errno where error == .interrupted {
                if isCancelled() { return .cancelled }
            } catch {
                return .ended
            }
        }
        return .read
    }

    public func close() {
        guard !closed else { return }
        closed = true
        // Closing our end first unblocks an ffmpeg stuck writing to a full pipe;
        // then SIGTERM, and SIGKILL if it is still there 2 s later.
        try? output.close()
        process.stop()
        try? errors.close()
    }
}
