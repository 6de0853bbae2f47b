import ChildProcesses
import Foundation
import Scratch
import SystemPackage
import Testing
import Waiting

@Suite("Child processes: started, waited for with a limit, stopped")
struct ChildProcessTests {
    @Test("an exit status and a signal are told apart")
    func endings() throws {
        #expect(try ChildProcess("/bin/sh", arguments: ["-c", "exit 3"]).wait() == .exited(3))
        #expect(try ChildProcess("/bin/sh", arguments: ["-c", "kill -9 $$"]).wait() == .killed(signal: SIGKILL))
    }

    @Test("a program that is not there is a one-line start error naming it")
    func missingProgram() {
        let error = #expect(throws: ChildProcess.StartError.self) { try ChildProcess("no-such-program-here", arguments: []) }
        #expect(error?.description == "cannot start no-such-program-here (No such file or directory)")
    }

    @Test("a wait with a limit gives up at the limit rather than waiting for the child, which still runs")
    func limitedWait() throws {
        let child = try ChildProcess("/bin/sleep", arguments: ["5"])
        let started = ContinuousClock.now
        #expect(child.wait(timeout: .milliseconds(200)) == nil)
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(child.stop() == .killed(signal: SIGTERM))
    }

    @Test("a child that ignores SIGTERM is killed once its grace has passed, with what it started")
    func stubbornChild() throws {
        let scratch = try ScratchDirectory("child")
        let marker = scratch.file("marker").path
        let child = try ChildProcess(
            "/bin/sh", arguments: ["-c", "trap '' TERM; (sleep 1; touch \(marker)) & wait"], ownProcessGroup: true,
            stopping: [(SIGTERM, .milliseconds(300))])
        #expect(child.wait(timeout: .milliseconds(100)) == nil)
        #expect(child.stop() == .killed(signal: SIGKILL))
        // The whole group is gone (no live process of it in /proc), so the subshell that would touch the marker is too.
        #expect(eventually { liveMembers(ofGroup: child.processIdentifier) == 0 }, "a member of the group outlived the kill")
        #expect(!FileManager.default.fileExists(atPath: marker), "the group's other member was killed too")
    }

    @Test("the environment is added to sentry's, and output reaches a pipe")
    func environmentAndOutput() throws {
        let pipe = try FileDescriptor.pipe()
        let child = try ChildProcess(
            "/bin/sh", arguments: ["-c", "printf '%s %s' \"$SENTRY_TEST_VALUE\" \"${HOME:+home}\""], environment: ["SENTRY_TEST_VALUE": "42"],
            output: .descriptor(pipe.writeEnd))
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = try bytes.withUnsafeMutableBytes { try pipe.readEnd.read(into: $0) }
        try pipe.readEnd.close()
        #expect(String(decoding: bytes[..<count], as: UTF8.self) == "42 home")
        #expect(child.wait() == .exited(0))
    }

    @Test("a child has descriptors 0, 1 and 2 only: sentry's own, inheritable ones included, stay behind")
    func noInheritedDescriptors() throws {
        // Made without close-on-exec on purpose: what a socket or pipe is for the moment before fcntl.
        // Numbered from 100 (F_DUPFD keeps them inheritable): the listing's own descriptor in the
        // child is its lowest free number, 3, which a pipe made here could have too (it did once).
        let made = try FileDescriptor.pipe()
        let leaky = (
            readEnd: FileDescriptor(rawValue: fcntl(made.readEnd.rawValue, F_DUPFD, 100)),
            writeEnd: FileDescriptor(rawValue: fcntl(made.writeEnd.rawValue, F_DUPFD, 100))
        )
        try made.readEnd.close()
        try made.writeEnd.close()
        #expect(leaky.readEnd.rawValue >= 100 && leaky.writeEnd.rawValue >= 100)
        defer {
            try? leaky.readEnd.close()
            try? leaky.writeEnd.close()
        }
        let pipe = try FileDescriptor.pipe(options: .closeOnExec)
        let child = try ChildProcess("/bin/sh", arguments: ["-c", "cd /proc/self/fd && echo *"], output: .descriptor(pipe.writeEnd))
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = try bytes.withUnsafeMutableBytes { try pipe.readEnd.read(into: $0) }
        try pipe.readEnd.close()
        #expect(child.wait() == .exited(0))
        let descriptors = String(decoding: bytes[..<count], as: UTF8.self).split(whereSeparator: \.isWhitespace)
        #expect(!descriptors.contains("\(leaky.readEnd.rawValue)") && !descriptors.contains("\(leaky.writeEnd.rawValue)"), "\(descriptors)")
        // Besides 0-2, only the one the listing itself opens.
        #expect(descriptors.filter { !["0", "1", "2"].contains($0) }.count <= 1, "\(descriptors)")
    }
}

/// How many processes of group `group` are alive (zombies, killed but not yet reaped, do not count).
func liveMembers(ofGroup group: pid_t) -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.filter { $0.allSatisfy(\.isNumber) }.filter { pid in
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        // After the command's closing parenthesis: state, parent, group.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 2 && fields[0] != "Z" && Int32(fields[2]) == group
    }.count
}
