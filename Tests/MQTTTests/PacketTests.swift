import Testing

@testable import MQTT

@Suite("MQTT 3.1.1 packets: the bytes sent, and a strict reader of the broker's")
struct PacketTests {
    @Test("CONNECT carries the protocol, the flags, the keep-alive, the client id, the will and the credentials in the standard's order")
    func connect() {
        var connect = MQTTPacket.Connect(clientID: "sentry-hall", keepAlive: 30, username: "u", password: Array("p".utf8))
        connect.will = MQTTMessage(topic: "s/a", text: "offline", qos: 1, retain: true)
        let bytes = MQTTPacket.connect(connect).bytes
        let body: [UInt8] =
            [0, 4] + Array("MQTT".utf8) + [4, 0x80 | 0x40 | 0x20 | 0x08 | 0x04 | 0x02, 0, 30] + [0, 11] + Array("sentry-hall".utf8)
            + [0, 3] + Array("s/a".utf8) + [0, 7] + Array("offline".utf8) + [0, 1, UInt8(ascii: "u"), 0, 1, UInt8(ascii: "p")]
        #expect(bytes == [0x10, UInt8(body.count)] + body)
    }

    @Test("PUBLISH, PUBACK, SUBSCRIBE, PINGREQ and DISCONNECT as the standard's examples")
    func others() {
        #expect(MQTTPacket.publish(MQTTMessage(topic: "a/b", text: "hi"), id: nil, duplicate: false).bytes == [0x30, 7, 0, 3, 97, 47, 98, 104, 105])
        #expect(MQTTPacket.publish(MQTTMessage(topic: "a", text: "", qos: 1, retain: true), id: 10, duplicate: true).bytes == [0x3B, 5, 0, 1, 97, 0, 10])
        #expect(MQTTPacket.publish(MQTTMessage(topic: "a", text: "x", qos: 1), id: nil, duplicate: false).bytes == [0x30, 4, 0, 1, 97, 120], "no id: QoS 0")
        #expect(MQTTPacket.puback(id: 258).bytes == [0x40, 2, 1, 2])
        #expect(MQTTPacket.subscribe(id: 1, filters: [("a/+", 1)]).bytes == [0x82, 8, 0, 1, 0, 3, 97, 47, 43, 1])
        #expect(MQTTPacket.pingreq.bytes == [0xC0, 0] && MQTTPacket.disconnect.bytes == [0xE0, 0])
    }

    @Test("the remaining length: one to four bytes of seven bits, as §2.2.3's table")
    func remainingLengths() {
        #expect(remainingLength(0) == [0] && remainingLength(127) == [0x7F])
        #expect(remainingLength(128) == [0x80, 0x01] && remainingLength(16_383) == [0xFF, 0x7F])
        #expect(remainingLength(16_384) == [0x80, 0x80, 0x01] && remainingLength(largestRemainingLength) == [0xFF, 0xFF, 0xFF, 0x7F])
    }

    @Test("packets come out whole however the bytes are cut, and round-trip")
    func reading() throws {
        let packets: [MQTTPacket] = [
            .connack(sessionPresent: false, refusal: nil), .publish(MQTTMessage(topic: "sentry/hall/set", text: "{\"offset\":30}", qos: 1), id: 7, duplicate: false),
            .puback(id: 3), .suback(id: 1, granted: [1, nil]), .pingresp,
        ]
        let stream = packets.flatMap(\.bytes)
        for cut in [1, 2, 5, stream.count] {
            var reader = MQTTPacketReader()
            var read: [MQTTPacket] = []
            var index = 0
            while index < stream.count {
                reader.append(stream[index..<min(index + cut, stream.count)])
                index += cut
                while let packet = try reader.next() { read.append(packet) }
            }
            #expect(read == packets, "cut every \(cut) bytes")
        }
    }

    @Test("what a client never takes is refused in one line: a length of 256 MB before any allocation, bad flags, sizes, codes, topics, a server's packets")
    func refusals() {
        func refusal(_ bytes: [UInt8], limit: Int = 64 * 1024) -> String? {
            var reader = MQTTPacketReader(maximumPacket: limit)
            reader.append(bytes)
            do {
                _ = try reader.next()
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refusal([0x30, 0xFF, 0xFF, 0xFF, 0x7F])?.contains("over the 65536 taken") == true)
        #expect(refusal([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])?.contains("longer than four bytes") == true)
        #expect(refusal([0x30, 0x80, 0x80, 0x80, 0x80, 0x01])?.contains("longer than four bytes") == true)
        #expect(refusal([0x20, 0x82, 0x00, 0, 0])?.contains("more bytes than it needs") == true)
        #expect(refusal([0x38, 3, 0, 1, 97])?.contains("QoS 0 marked as sent again") == true)
        #expect(refusal([0x21, 2, 0, 0])?.contains("CONNACK with flags 1") == true)
        #expect(refusal([0x20, 3, 0, 0, 0])?.contains("CONNACK of 3 bytes") == true)
        #expect(refusal([0x20, 2, 0, 6])?.contains("return code 6") == true)
        #expect(refusal([0x20, 2, 2, 0])?.contains("reserved flags") == true)
        #expect(refusal([0x34, 5, 0, 1, 97, 0, 1])?.contains("QoS 2") == true)
        #expect(refusal([0x32, 5, 0, 1, 97, 0, 0])?.contains("packet id 0") == true)
        #expect(refusal([0x30, 4, 0, 2, 0x61, 0x00])?.contains("not UTF-8") == true)
        #expect(refusal([0x30, 4, 0, 2, 0xC3, 0x28])?.contains("not UTF-8") == true)
        #expect(refusal([0x30, 4, 0, 2, 0x61, 0x23])?.contains("not one") == true)
        #expect(refusal([0x30, 3, 0, 5, 97])?.contains("cut short") == true)
        #expect(refusal([0x90, 3, 0, 1, 3])?.contains("return codes") == true)
        #expect(refusal([0x10, 0])?.contains("CONNECT") == true)
        #expect(refusal([0xC0, 0])?.contains("PINGREQ") == true)
        #expect(refusal([0xF0, 0])?.contains("packet type 15") == true)
        #expect(refusal([0x30, 0x80]) == nil, "a length not yet whole waits for more")
    }

    @Test("topic filters: + one level, # the rest, nothing else")
    func filters() {
        #expect(topicFilter("sentry/+/set", matches: "sentry/hall/set") && topicFilter("sentry/#", matches: "sentry/hall/set"))
        #expect(topicFilter("homeassistant/status", matches: "homeassistant/status"))
        #expect(!topicFilter("sentry/+/set", matches: "sentry/hall/command") && !topicFilter("sentry/+", matches: "sentry/hall/set"))
        #expect(!topicFilter("sentry/hall/set", matches: "sentry/hall/set/x") && !topicFilter("a", matches: "b"))
    }

    @Test("--mqtt: mqtt://[USER@]HOST[:PORT]; mqtts, a password, a bad port or no host are refused in one line that says what to write")
    func addresses() throws {
        #expect(try BrokerAddress(parsing: "mqtt://broker") == BrokerAddress(host: "broker"))
        #expect(try BrokerAddress(parsing: "mqtt://sentry@192.168.1.10:1884/") == BrokerAddress(host: "192.168.1.10", port: 1884, username: "sentry"))
        #expect(try BrokerAddress(parsing: "mqtt://[::1]:1999") == BrokerAddress(host: "::1", port: 1999))
        #expect(try BrokerAddress(parsing: "mqtt://[::1]:1999").description == "mqtt://[::1]:1999")
        for (text, says) in [
            ("mqtts://broker", "TLS (mqtts://) is not built in"), ("broker:1883", "must start with mqtt://"),
            ("mqtt://u:secret@broker", "give the user alone"), ("mqtt://broker:0", "from 1 to 65535"), ("mqtt://broker:+1", "from 1 to 65535"),
            ("mqtt://", "names no host"), ("mqtt://@broker", "give the user alone"), ("mqtt://[::1", "closing ]"),
        ] {
            #expect(throws: MQTTConnectionError.self) { try BrokerAddress(parsing: text) }
            do {
                _ = try BrokerAddress(parsing: text)
            } catch {
                #expect(error.description.contains(says), "\(text): \(error.description)")
            }
        }
    }
}
