import Foundation
import Scratch
import Serial
import Testing
import TurretLinks
import TurretProtocol
import Waiting

/// How many descriptors this process holds open on `path`.
private func descriptorsOpen(on path: String) -> Int {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }.count
}

/// A simulated board at a path of its own (a symlink to a pseudo-terminal):
/// unplugging removes the path, as a USB unplug removes the node, so no
/// reopen can reach a pseudo-terminal that another test made under the
/// number this one had.
private final class Board {
    let terminal: PseudoTerminal
    let path: String
    private let directory: ScratchDirectory

    init(_ directory: ScratchDirectory, name: String) throws {
        self.directory = directory
        terminal = try PseudoTerminal()
        path = directory.file(name).path
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: terminal.devicePath)
    }

    func unplug() {
        try? FileManager.default.removeItem(atPath: path)
        terminal.close()
    }
}

@Suite("The serial link watches its port on a thread of its own")
struct SerialLinkTests {
    @Test("a port that hangs up is let go at once, with nothing sent and no frame running")
    func hangUpClosesWithoutSending() throws {
        let board = try Board(try ScratchDirectory("hang-up"), name: "ttyUSB0")
        let link = try SerialCommandOutput(path: board.path)
        defer { link.close() }
        #expect(link.state == .ok)
        let path = board.terminal.devicePath
        #expect(descriptorsOpen(on: path) == 2, "the board's own end and the link's")
        board.unplug()
        #expect(eventually { link.state == .reconnecting }, "the link never noticed the hang-up")
        #expect(eventually { descriptorsOpen(on: path) == 0 }, "the hung-up port is still open, keeping its name")
    }

    @Test("a board back under another name is found again where relocate says, and told the aim again")
    func relocatesAfterReplug() throws {
        let first = try Board(try ScratchDirectory("relocate"), name: "ttyUSB0")
        let second = try PseudoTerminal()
        let elsewhere = second.devicePath
        let link = try SerialCommandOutput(path: first.path, relocate: { elsewhere })
        defer { link.close() }
        try link.send([.lost])
        #expect(first.terminal.read(timeout: 5) == Array("L".utf8))
        first.unplug()
        #expect(eventually { link.reconnectCount == 1 }, "the link did not reopen at the new name")
        #expect(link.deviceNode == elsewhere)
        #expect(link.takeReconnected())
        try link.send([.pan(90)])
        #expect(second.read(timeout: 5) == Array("X90.".utf8))
    }

    @Test("close stops the link's thread and lets go of the port")
    func closeLetsGo() throws {
        let board = try PseudoTerminal()
        let link = try SerialCommandOutput(path: board.devicePath)
        #expect(descriptorsOpen(on: board.devicePath) == 2)
        link.close()
        link.close()
        #expect(descriptorsOpen(on: board.devicePath) == 1, "only the board's own end")
        #expect(link.state == .reconnecting)
    }
}
