import FaceDetection
import Foundation

/// Frame size as `width x height`, e.g. from `--size 640x480`.
public struct FrameSize: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `WxH`, both between 16 and 8192.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (16...8192).contains(w), (16...8192).contains(h) else { return nil }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }
}

/// Frames from a video file or still image, decoded to 8-bit gray by an
/// `ffmpeg` subprocess (`-f rawvideo -pix_fmt gray`).
///
/// Frames come as fast as they decode, or at the file's own rate with
/// `realtime`. Timestamps follow the file's frame rate either way, so a file
/// gives the same result however fast the machine is.
public final class FileFrameSource: FrameSource {
    public let path: String
    public let width: Int
    public let height: Int
    public let framesPerSecond: Double
    public var name: String { (path as NSString).lastPathComponent }

    private let process: Process
    private let output: FileHandle
    private let errors: Pipe
    private var frameIndex = 0
    private var closed = false
    private let isCancelled: @Sendable () -> Bool
    private var buffer: [UInt8]

    /// Opens `path`; `size` rescales frames, `realtime` paces them at the
    /// file's frame rate, `loop` plays the file again at its end.
    /// `isCancelled` is asked when a signal interrupts a wait for a frame:
    /// true ends the stream there.
    public init(path: String, size: FrameSize? = nil, realtime: Bool = false, loop: Bool = false,
                isCancelled: @escaping @Sendable () -> Bool = { false }) throws(VideoError) {
        self.path = path
        self.isCancelled = isCancelled
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw VideoError(source: path, reason: "no such file or device", hint: "pass a video file, an image or a camera such as /dev/video0")
        }
        guard !isDirectory.boolValue else {
            throw VideoError(source: path, reason: "is a directory", hint: "pass a video file, an image or a camera such as /dev/video0")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw VideoError(source: path, reason: "permission denied", hint: "make the file readable (chmod a+r)")
        }
        let info = try Self.probe(path)
        width = size?.width ?? info.width
        height = size?.height ?? info.height
        framesPerSecond = info.framesPerSecond
        buffer = [UInt8](repeating: 0, count: width * height)

        var arguments = ["-nostdin", "-v", "error"]
        if realtime { arguments.append("-re") }
        if loop { arguments += ["-stream_loop", "-1"] }
        arguments += ["-i", path, "-map", "0:v:0", "-vf", "scale=\(width):\(height)", "-f", "rawvideo", "-pix_fmt", "gray", "-"]
        let pipe = Pipe()
        errors = Pipe()
        process = try Self.start("ffmpeg", arguments, output: pipe, errors: errors, source: path)
        output = pipe.fileHandleForReading
    }

    /// Starts one of ffmpeg's tools with its output and errors on pipes.
    private static func start(_ tool: String, _ arguments: [String], output: Pipe, errors: Pipe, source: String) throws(VideoError) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw VideoError(source: source, reason: "cannot start \(tool) (\(error.localizedDescription))", hint: "install it: sudo apt-get install ffmpeg")
        }
        return process
    }

    deinit { close() }

    public func nextFrame() throws(VideoError) -> Frame? {
        guard !closed else { return nil }
        let count = width * height
        var filled = 0
        let fd = output.fileDescriptor
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
            if n < 0 && errno == EINTR {
                if isCancelled() { return nil }
                continue
            }
            if n <= 0 { break }
            filled += n
        }
        if filled < count {
            process.waitUntilExit()
            let status = process.terminationStatus
            if frameIndex == 0 || (status != 0 && process.terminationReason == .exit) {
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    .split(separator: "\n").first.map(String.init) ?? "no frames"
                throw VideoError(source: path, reason: "ffmpeg cannot decode it (\(message))", hint: "pass a video or image file that ffmpeg can play")
            }
            return nil
        }
        defer { frameIndex += 1 }
        let rate = framesPerSecond > 0 ? framesPerSecond : 25
        return Frame(image: GrayImage(width: width, height: height, pixels: buffer),
                     timestamp: Double(frameIndex) / rate, index: frameIndex)
    }

    public func close() {
        guard !closed else { return }
        closed = true
        // Closing our end first unblocks an ffmpeg stuck writing to a full pipe.
        try? output.close()
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning, Date() < deadline { usleep(2000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    struct StreamInfo {
        var width: Int
        var height: Int
        var framesPerSecond: Double
    }

    /// Asks `ffprobe` for the first video stream's size and frame rate.
    static func probe(_ path: String) throws(VideoError) -> StreamInfo {
        let out = Pipe(), err = Pipe()
        let process = try start("ffprobe", ["-v", "error", "-select_streams", "v:0",
                                            "-show_entries", "stream=width,height,avg_frame_rate,r_frame_rate",
                                            "-of", "default=noprint_wrappers=1", path],
                                output: out, errors: err, source: path)
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus != 127 else {
            throw VideoError(source: path, reason: "ffprobe is not installed", hint: "install it: sudo apt-get install ffmpeg")
        }
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let pair = line.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        guard process.terminationStatus == 0, let w = fields["width"].flatMap(Int.init), let h = fields["height"].flatMap(Int.init), w > 0, h > 0 else {
            let detail = errorText.split(separator: "\n").last.map { String($0.suffix(120)) } ?? "no video stream"
            throw VideoError(source: path, reason: "not a video or image ffmpeg can decode (\(detail))", hint: "pass a video or image file that ffmpeg can play")
        }
        func rate(_ text: String?) -> Double? {
            guard let parts = text?.split(separator: "/"), parts.count == 2,
                  let n = Double(parts[0]), let d = Double(parts[1]), d > 0, n > 0 else { return nil }
            return n / d
        }
        return StreamInfo(width: w, height: h, framesPerSecond: rate(fields["avg_frame_rate"]) ?? rate(fields["r_frame_rate"]) ?? 0)
    }
}
