import SentryCore
import Testing

@Suite("Which commands reach the wire (SPEC §1.6)")
struct CommandFilterTests {
    @Test("the same X90. twice is written once")
    func deduplicates() {
        var filter = CommandFilter()
        #expect(filter.commands(for: Aim(pan: 90, tilt: 90), at: 0) == [.pan(90)])
        #expect(filter.commands(for: Aim(pan: 90, tilt: 70), at: 0.1) == [])
        #expect(filter.commands(for: Aim(pan: 91, tilt: 70), at: 0.2) == [.pan(91)])
    }

    @Test("L is sent once when the face leaves, and again only after a face was seen")
    func lostOnce() {
        var filter = CommandFilter()
        _ = filter.commands(for: Aim(pan: 100, tilt: 90), at: 0)
        #expect(filter.commands(for: nil, at: 0.1) == [.lost])
        #expect(filter.commands(for: nil, at: 0.2) == [])
        #expect(filter.commands(for: nil, at: 5) == [])
        #expect(filter.commands(for: Aim(pan: 100, tilt: 90), at: 5.1) == [.pan(100)])
        #expect(filter.commands(for: nil, at: 5.2) == [.lost])
    }

    @Test("after L the same aim as before is sent again")
    func aimAfterLost() {
        var filter = CommandFilter()
        _ = filter.commands(for: Aim(pan: 100, tilt: 90), at: 0)
        _ = filter.commands(for: nil, at: 0.1)
        #expect(filter.commands(for: Aim(pan: 100, tilt: 90), at: 0.2) == [.pan(100)])
    }

    @Test("tilt commands only when tilt is enabled, de-duplicated per axis")
    func tiltAxis() {
        var filter = CommandFilter(tiltEnabled: true)
        #expect(filter.commands(for: Aim(pan: 90, tilt: 80), at: 0) == [.pan(90), .tilt(80)])
        #expect(filter.commands(for: Aim(pan: 90, tilt: 81), at: 0.1) == [.tilt(81)])
        #expect(filter.commands(for: Aim(pan: 92, tilt: 81), at: 0.2) == [.pan(92)])
    }

    @Test("a deadband drops small moves but not large ones")
    func deadband() {
        var filter = CommandFilter(deadband: 2)
        #expect(filter.commands(for: Aim(pan: 90, tilt: 90), at: 0) == [.pan(90)])
        #expect(filter.commands(for: Aim(pan: 92, tilt: 90), at: 0.1) == [])
        #expect(filter.commands(for: Aim(pan: 88, tilt: 90), at: 0.2) == [])
        #expect(filter.commands(for: Aim(pan: 93, tilt: 90), at: 0.3) == [.pan(93)])
        // Measured from the last written aim, not the last seen one.
        #expect(filter.commands(for: Aim(pan: 95, tilt: 90), at: 0.4) == [])
    }

    @Test("lost-target debounce: L only after the face has been missing long enough")
    func debounce() {
        var filter = CommandFilter(lostAfter: 1.0)
        _ = filter.commands(for: Aim(pan: 90, tilt: 90), at: 10.0)
        #expect(filter.commands(for: nil, at: 10.1) == [])
        #expect(filter.commands(for: nil, at: 10.9) == [])
        #expect(filter.commands(for: nil, at: 11.1) == [.lost])
        #expect(filter.commands(for: nil, at: 12.0) == [])
    }

    @Test("a face seen again within the debounce time cancels the L")
    func debounceCancelled() {
        var filter = CommandFilter(lostAfter: 1.0)
        _ = filter.commands(for: Aim(pan: 90, tilt: 90), at: 0)
        #expect(filter.commands(for: nil, at: 0.5) == [])
        #expect(filter.commands(for: Aim(pan: 90, tilt: 90), at: 0.8) == [])
        #expect(filter.commands(for: nil, at: 1.5) == [])
        #expect(filter.commands(for: nil, at: 2.6) == [.lost])
    }

    @Test("after reset the current aim is written again")
    func resetResends() {
        var filter = CommandFilter()
        _ = filter.commands(for: Aim(pan: 90, tilt: 90), at: 0)
        filter.reset()
        #expect(filter.commands(for: Aim(pan: 90, tilt: 90), at: 0.1) == [.pan(90)])
    }
}
