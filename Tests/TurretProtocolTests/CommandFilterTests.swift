import Geometry
import Testing
import TurretProtocol

@Suite("Which commands reach the wire (SPEC §1.6)")
struct CommandFilterTests {
    @Test("the same X90. twice is written once")
    func deduplicates() {
        var filter = CommandFilter()
        #expect(filter.commands(for: Aim(pan: 90, tilt: 90)) == [.pan(90)])
        #expect(filter.commands(for: Aim(pan: 90, tilt: 70)) == [])
        #expect(filter.commands(for: Aim(pan: 91, tilt: 70)) == [.pan(91)])
    }

    @Test("L is sent once when the face leaves, and again only after a face was seen")
    func lostOnce() {
        var filter = CommandFilter()
        _ = filter.commands(for: Aim(pan: 100, tilt: 90))
        #expect(filter.commands(for: nil) == [.lost])
        #expect(filter.commands(for: nil) == [])
        #expect(filter.commands(for: nil) == [])
        #expect(filter.commands(for: Aim(pan: 100, tilt: 90)) == [.pan(100)])
        #expect(filter.commands(for: nil) == [.lost])
    }

    @Test("after L the same aim as before is sent again")
    func aimAfterLost() {
        var filter = CommandFilter()
        _ = filter.commands(for: Aim(pan: 100, tilt: 90))
        _ = filter.commands(for: nil)
        #expect(filter.commands(for: Aim(pan: 100, tilt: 90)) == [.pan(100)])
    }

    @Test("tilt commands only when tilt is enabled, de-duplicated per axis")
    func tiltAxis() {
        var filter = CommandFilter(tiltEnabled: true)
        #expect(filter.commands(for: Aim(pan: 90, tilt: 80)) == [.pan(90), .tilt(80)])
        #expect(filter.commands(for: Aim(pan: 90, tilt: 81)) == [.tilt(81)])
        #expect(filter.commands(for: Aim(pan: 92, tilt: 81)) == [.pan(92)])
    }

    @Test("a deadband drops small moves but not large ones")
    func deadband() {
        var filter = CommandFilter(deadband: 2)
        #expect(filter.commands(for: Aim(pan: 90, tilt: 90)) == [.pan(90)])
        #expect(filter.commands(for: Aim(pan: 92, tilt: 90)) == [])
        #expect(filter.commands(for: Aim(pan: 88, tilt: 90)) == [])
        #expect(filter.commands(for: Aim(pan: 93, tilt: 90)) == [.pan(93)])
        // Measured from the last written aim, not the last seen one.
        #expect(filter.commands(for: Aim(pan: 95, tilt: 90)) == [])
    }

    @Test("the parting L is not sent when L was the last command: never LL on the wire")
    func partingDeduplicated() {
        var filter = CommandFilter(tiltEnabled: true)
        _ = filter.commands(for: Aim(pan: 100, tilt: 80))
        #expect(filter.commands(for: nil) == [.lost])
        #expect(filter.newOnly([.lost]) == [])
        #expect(filter.newOnly([.pan(90), .tilt(80)]) == [.pan(90)])
    }

    @Test("the parting centre ignores the deadband")
    func partingExact() {
        var filter = CommandFilter(deadband: 5)
        _ = filter.commands(for: Aim(pan: 92, tilt: 90))
        #expect(filter.newOnly([.pan(90)]) == [.pan(90)])
    }

    @Test("after reset the current aim is written again")
    func resetResends() {
        var filter = CommandFilter()
        _ = filter.commands(for: Aim(pan: 90, tilt: 90))
        filter.reset()
        #expect(filter.commands(for: Aim(pan: 90, tilt: 90)) == [.pan(90)])
    }
}
