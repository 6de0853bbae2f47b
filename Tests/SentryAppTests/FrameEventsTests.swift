import Events
import Geometry
import Testing
import Tracking
import TurretProtocol

@testable import SentryApp

@Suite("A frame's events, found once by the pipeline")
struct FrameEventsTests {
    let face = Box(x: 100, y: 100, width: 80, height: 80)

    func kinds(_ finder: inout FrameEventFinder, at time: Double, faces: [Box], lock: LockOn.Event? = nil, commands: [Command] = []) -> [EventKind] {
        finder.events(at: time, faces: faces, target: faces.first, lockEvent: lock, commands: commands, followed: nil, lostAfter: 0.3).map(\.kind)
    }

    @Test("a face arrives at the start and after two seconds of nobody, not after a blink's absence")
    func arrivals() {
        var finder = FrameEventFinder(rules: [])
        #expect(kinds(&finder, at: 0, faces: [face]) == [.arrive])
        #expect(kinds(&finder, at: 0.1, faces: [face]).isEmpty)
        #expect(kinds(&finder, at: 1.0, faces: []).isEmpty)
        #expect(kinds(&finder, at: 1.5, faces: [face]).isEmpty, "1.4 s without a face is not an empty room")
        #expect(kinds(&finder, at: 3.6, faces: [face]) == [.arrive], "2.1 s without one is")
    }

    @Test("a lock, its loss and a shot are events of the frame they happen on, in that order")
    func lockAndShot() {
        var finder = FrameEventFinder(rules: [])
        _ = kinds(&finder, at: 0, faces: [face])
        #expect(kinds(&finder, at: 1, faces: [face], lock: .locked(face), commands: [.pan(90), .fire(90)]) == [.lock, .shot])
        #expect(kinds(&finder, at: 1.1, faces: [face], commands: [.pan(91)]).isEmpty)
        #expect(kinds(&finder, at: 1.5, faces: [], lock: .lost(face)) == [.lost])
    }
}
