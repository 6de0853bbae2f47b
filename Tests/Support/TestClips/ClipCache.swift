import Foundation

/// Where the clips the tests play are kept: the checkout's `.cache/test-clips`, each
/// named by a hash of its recipe (the command that makes it, the contents of the files
/// it reads, ffmpeg's version). Some take seconds of CPU to make (a camera's grain under
/// H.264), and made per test process they were a tenth of the suite's time; kept here,
/// a run made again and test processes side by side make each clip once. A changed
/// recipe is a new name; `make clean` empties the folder.
enum ClipCache {
    static let folder: URL = {
        let url = DemoClip.repository.appendingPathComponent(".cache/test-clips")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// ffmpeg as the clips are made: quiet but for errors, overwriting.
    static let ffmpeg = ["/usr/bin/env", "ffmpeg", "-nostdin", "-v", "error", "-y"]

    /// The clip `name` (`still-0.mp4`) that `command` writes to the path put after
    /// its arguments, made now unless the cache holds it; `reads` are the files it
    /// reads that its arguments do not name.
    static func clip(_ name: String, command: [String], reads: [String] = []) -> String {
        let url = URL(fileURLWithPath: name)
        let stem = url.deletingPathExtension().lastPathComponent, suffix = url.pathExtension
        return made(folder.appendingPathComponent("\(stem)-\(key(command + reads)).\(suffix)").path, by: command)
    }

    /// `clip` (one of this folder's) decoded once into YUV4MPEG beside it, under its
    /// name (which holds its recipe's hash) with `.y4m`, in the clip's own pixel format
    /// (gray stays gray): ffmpeg plays the same frames from it, byte for byte, without
    /// decoding the clip's codec at every play.
    static func decoded(_ clip: String) -> String {
        let path = URL(fileURLWithPath: clip).deletingPathExtension().appendingPathExtension("y4m").path
        return made(path, by: ffmpeg + ["-i", clip, "-f", "yuv4mpegpipe"])
    }

    /// `path`, made now by `command` (the path put after its arguments) unless it is
    /// there. It writes under another name, renamed when whole: processes side by side
    /// never read a clip still being written.
    private static func made(_ path: String, by command: [String]) -> String {
        if !FileManager.default.fileExists(atPath: path) {
            let url = URL(fileURLWithPath: path)
            let partial = url.deletingLastPathComponent().appendingPathComponent(
                "\(url.deletingPathExtension().lastPathComponent)-partial-\(UUID().uuidString).\(url.pathExtension)").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst()) + [partial]
            try? process.run()
            process.waitUntilExit()
            rename(partial, path)
        }
        return path
    }

    /// FNV-1a over the words, the contents of each word that names a file,
    /// and ffmpeg's version, as 16 hex digits.
    private static func key(_ recipe: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
            hash = (hash ^ 0xff) &* 0x0000_0100_0000_01b3
        }
        for word in recipe + [ffmpegVersion] {
            mix(word.utf8)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: word, isDirectory: &isFolder), !isFolder.boolValue,
                let contents = FileManager.default.contents(atPath: word)
            {
                mix(contents)
            }
        }
        return String(hash, radix: 16)
    }

    /// `ffmpeg -version`'s first line: another ffmpeg may encode another clip.
    private static let ffmpegVersion: String = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-version"]
        let output = Pipe()
        process.standardOutput = output
        try? process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix { $0 != "\n" })
    }()
}
