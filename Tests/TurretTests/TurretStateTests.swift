import Geometry
import Testing
import Turret
import TurretProtocol

@Suite("What the turret was told, in one place")
struct TurretStateTests {
    @Test("what is written is filtered and fed to the model: the firmware's angle, and nothing twice")
    func writeFiltersAndRecords() {
        var turret = TurretState(tiltEnabled: true)
        #expect(turret.write(Aim(pan: 120, tilt: 80), at: 0) == [.pan(120), .tilt(80)])
        #expect(turret.write(Aim(pan: 120, tilt: 80), at: 0.1) == [])
        #expect(turret.commanded == Aim(pan: 120, tilt: 80))
        #expect(turret.lastWritten == [.pan(120), .tilt(80)])
        turret.model.advance(to: 5)
        #expect(turret.model.pan == 120, "the servo got there")
    }

    @Test("a reboot forgets it all: the board stands centred and every axis is written again")
    func rebootForgets() {
        var turret = TurretState(tiltEnabled: true)
        _ = turret.write(Aim(pan: 120, tilt: 80), at: 0)
        let told = turret.lastWritten
        turret.rebooted(at: 1)
        #expect(turret.commanded == Aim(pan: 90, tilt: 90))
        #expect(turret.lastWritten.isEmpty)
        #expect(turret.writeNew(told, at: 1) == [.pan(120), .tilt(80)])
    }

    @Test("the parting L after L is not written: never LL")
    func partingAfterLost() {
        var turret = TurretState()
        _ = turret.write(Aim(pan: 100, tilt: 90), at: 0)
        #expect(turret.write(nil, at: 0.1) == [.lost])
        #expect(turret.writeNew([.lost], at: 0.2) == [])
    }
}
