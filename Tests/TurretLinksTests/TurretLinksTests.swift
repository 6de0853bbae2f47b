import Foundation
import Serial
import Synchronization
import Testing
import Waiting
@testable import TurretLinks

@Suite("The link's reconnect schedule and errors")
struct LinkTests {
    @Test("an attempt is due at once, then every retry interval; retryNow makes one due again")
    func schedule() {
        var schedule = ReconnectSchedule()
        var due: [Bool] = []
        due.append(schedule.attemptIsDue(at: 10))
        due.append(schedule.attemptIsDue(at: 10.2))
        due.append(schedule.attemptIsDue(at: 10 + ReconnectSchedule.retryInterval))
        schedule.retryNow()
        due.append(schedule.attemptIsDue(at: 10.6))
        schedule.wentDown(at: 20)
        due.append(schedule.attemptIsDue(at: 20.1))
        due.append(schedule.attemptIsDue(at: 20.5))
        #expect(due == [true, false, true, true, false, true])
    }

    @Test("came back is told once")
    func cameBackOnce() {
        var schedule = ReconnectSchedule()
        var told = [schedule.takeReconnected()]
        schedule.cameBack()
        told += [schedule.takeReconnected(), schedule.takeReconnected()]
        #expect(told == [false, true, false])
    }

    @Test("a serial port's error and a relay's are each named as what they are")
    func errorNames() {
        let serial = LinkError(SerialError(.notFound, path: "/dev/ttyACM9", reason: "no such device", hint: "plug it in"))
        #expect(serial.description == "serial port /dev/ttyACM9: no such device; plug it in")
        #expect(serial.kind == .serialPort(.notFound))
        let relay = LinkError(.relayUnreachable, link: "relay ws://pi:12354/", reason: "connection refused", hint: "start sentry relay there")
        #expect(relay.description == "relay ws://pi:12354/: connection refused; start sentry relay there")
        #expect(LinkState.reconnecting.description == "reconnecting")
    }
}

@Suite("A relay's name is looked up off the frame thread")
struct AddressLookupTests {
    @Test("a reconnection never waits for a slow name server: it takes the last address and looks again behind it")
    func neverWaits() throws {
        let lookups = Mutex(0)
        // The name server answers only when the test lets it: until then a lookup hangs.
        let answer = DispatchSemaphore(value: 0)
        // The lookups it starts later (it looks again behind each answer) are answered too.
        defer { for _ in 0..<16 { answer.signal() } }
        let lookup = AddressLookup(host: "pi.local") { _ in
            lookups.withLock { $0 += 1 }
            answer.wait()
            return 0x0100_007F
        }
        // Both calls return while the lookup still hangs: neither waited for it.
        #expect(lookup.latest() == nil, "nothing found yet: this attempt fails, the lookup goes on")
        #expect(lookup.latest() == nil)
        #expect(eventually { lookups.withLock { $0 } == 1 }, "the lookup started")
        #expect(lookups.withLock { $0 } == 1, "one lookup at a time")
        answer.signal()
        var found: UInt32?
        #expect(eventually {
            found = lookup.latest()
            return found != nil
        })
        #expect(found == 0x0100_007F)
    }

    @Test("an IP literal is its own address, with no lookup")
    func literal() {
        let lookup = AddressLookup(host: "127.0.0.1") { _ in
            Issue.record("looked up a literal")
            return nil
        }
        #expect(lookup.latest() == 0x0100_007F)
        #expect(lookup.lookUpNow() == 0x0100_007F)
    }
}
