import ClockSync
import PropertyBased
import TestSupport
import Testing

@Suite("NTP packet wire format")
struct NTPPacketTests {
    static let packetGen = Gen.uint8().array(of: 48).map { try! NTPPacket(bytes: $0) }

    @Test("a known packet encodes to the RFC 5905 layout")
    func layout() throws {
        let packet = NTPPacket(
            leap: .unsynchronized, version: 4, mode: .client, stratum: 2, poll: 6, precision: -20,
            rootDelay: NTPShortFormat(rawValue: 0x0102_0304), rootDispersion: NTPShortFormat(rawValue: 0x0506_0708),
            referenceID: 0x7F00_0001, referenceTimestamp: NTPTimestamp(rawValue: 0x1111_1111_2222_2222),
            originTimestamp: NTPTimestamp(rawValue: 0x3333_3333_4444_4444),
            receiveTimestamp: NTPTimestamp(rawValue: 0x5555_5555_6666_6666),
            transmitTimestamp: NTPTimestamp(rawValue: 0x7777_7777_8888_8888)
        )
        let bytes = packet.encoded()
        #expect(bytes.count == 48)
        #expect(Array(bytes[0..<4]) == [0b11_100_011, 2, 6, 0xEC])
        #expect(Array(bytes[4..<16]) == [1, 2, 3, 4, 5, 6, 7, 8, 0x7F, 0, 0, 1])
        #expect(Array(bytes[16..<20]) == [0x11, 0x11, 0x11, 0x11])
        #expect(Array(bytes[44..<48]) == [0x88, 0x88, 0x88, 0x88])
        #expect(try NTPPacket(bytes: bytes) == packet)
    }

    @Test("encode then decode is the identity")
    func roundTrip() async {
        await propertyCheck(count: 2000, input: Self.packetGen) { packet in
            #expect((try? NTPPacket(bytes: packet.encoded())) == packet)
        }
    }

    @Test("contiguous and non-contiguous byte collections decode alike (with trailing bytes ignored)")
    func collectionKinds() async {
        await propertyCheck(count: 1000, input: Gen.uint8().array(of: 48...80)) { bytes in
            let fromArray = try? NTPPacket(bytes: bytes)
            let fromSlice = try? NTPPacket(bytes: bytes[...])
            // A lazily mapped collection has no contiguous storage: the copying path.
            let fromLazy = try? NTPPacket(bytes: bytes.lazy.map { $0 })
            let fromReversedTwice = try? NTPPacket(bytes: bytes.reversed().reversed())
            #expect(fromArray != nil)
            #expect(fromSlice == fromArray && fromLazy == fromArray && fromReversedTwice == fromArray)
            #expect(fromArray?.encoded() == Array(bytes.prefix(48)))
        }
    }

    @Test("decoding is total: any byte string yields a packet or a typed error, and 48+ bytes re-encode exactly")
    func totalDecoder() async {
        await propertyCheck(count: 5000, input: Gen.uint8().array(of: 0...120)) { bytes in
            do {
                let packet = try NTPPacket(bytes: bytes)
                #expect(packet.encoded() == Array(bytes.prefix(48)))
            } catch {
                #expect(error as? NTPPacketError == .truncated(length: bytes.count))
                #expect(bytes.count < 48)
            }
        }
    }

    @Test("a million random and mutated packets: decode and validate never trap, and decode exactly")
    func millionPackets() {
        var rng = SplitMix64(seed: 2026)
        let valid = NTPPacket(
            mode: .server, stratum: 2, poll: 6, precision: -20, referenceID: 0x7F00_0001,
            originTimestamp: NTPTimestamp(rawValue: 0xDEAD_BEEF_0000_0001),
            receiveTimestamp: NTPTimestamp(unixSeconds: 1_800_000_000),
            transmitTimestamp: NTPTimestamp(unixSeconds: 1_800_000_000.001)
        ).encoded()
        var decoded = 0
        var acceptedResponses = 0
        for i in 0..<1_000_000 {
            var bytes: [UInt8]
            switch i % 4 {
            case 0:   // random garbage of random length
                bytes = (0..<Int.random(in: 0...96, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1:   // a valid response with a few bits flipped
                bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    bytes[Int.random(in: 0..<48, using: &rng)] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                }
            case 2:   // truncated or extended
                bytes = Array(valid.prefix(Int.random(in: 0...48, using: &rng)))
                if Bool.random(using: &rng) { bytes += (0..<Int.random(in: 0...64, using: &rng)).map { _ in 0xA5 } }
            default:  // header fields randomised, timestamps kept
                bytes = valid
                for index in 0..<4 { bytes[index] = UInt8.random(in: 0...255, using: &rng) }
            }
            guard let packet = try? NTPPacket(bytes: bytes) else {
                #expect(bytes.count < 48)
                continue
            }
            decoded += 1
            if packet.encoded() != Array(bytes.prefix(48)) {
                Issue.record("decode/encode mismatch for \(bytes)")
                return
            }
            if (try? packet.validateResponse(origin: NTPTimestamp(rawValue: 0xDEAD_BEEF_0000_0001))) != nil {
                acceptedResponses += 1
            }
            _ = try? packet.validateRequest()
        }
        #expect(decoded > 500_000)
        #expect(acceptedResponses > 0)
    }

    @Test("request validation: mode 3, version 1...4, non-zero transmit")
    func requestValidation() {
        var request = NTPPacket(mode: .client, transmitTimestamp: NTPTimestamp(rawValue: 1))
        #expect(throws: Never.self) { try request.validateRequest() }
        request.version = 1
        #expect(throws: Never.self) { try request.validateRequest() }
        request.version = 5
        #expect(throws: NTPPacketError.unsupportedVersion(5)) { try request.validateRequest() }
        request.version = 0
        #expect(throws: NTPPacketError.unsupportedVersion(0)) { try request.validateRequest() }
        request.version = 4
        request.transmitTimestamp = .zero
        #expect(throws: NTPPacketError.zeroTimestamp("transmit")) { try request.validateRequest() }
        for mode in NTPPacket.Mode.allCases where mode != .client {
            let other = NTPPacket(mode: mode, transmitTimestamp: NTPTimestamp(rawValue: 1))
            #expect(throws: NTPPacketError.unexpectedMode(mode)) { try other.validateRequest() }
        }
    }

    static let origin = NTPTimestamp(rawValue: 0x1234_5678_9ABC_DEF0)
    static func response() -> NTPPacket {
        NTPPacket(
            mode: .server, stratum: 3, originTimestamp: origin,
            receiveTimestamp: NTPTimestamp(unixSeconds: 1_800_000_000),
            transmitTimestamp: NTPTimestamp(unixSeconds: 1_800_000_000.000_1)
        )
    }

    @Test("response validation catches each defect", arguments: [
        ("mode", NTPPacketError.unexpectedMode(.client)),
        ("version", .unsupportedVersion(7)),
        ("origin", .originMismatch),
        ("stratum", .invalidStratum(16)),
        ("leap", .unsynchronized),
        ("receive", .zeroTimestamp("receive")),
        ("transmit", .zeroTimestamp("transmit")),
    ])
    func responseValidation(defect: String, expected: NTPPacketError) {
        var packet = Self.response()
        #expect(throws: Never.self) { try packet.validateResponse(origin: Self.origin) }
        switch defect {
        case "mode": packet.mode = .client
        case "version": packet.version = 7
        case "origin": packet.originTimestamp = NTPTimestamp(rawValue: 99)
        case "stratum": packet.stratum = 16
        case "leap": packet.leap = .unsynchronized
        case "receive": packet.receiveTimestamp = .zero
        default: packet.transmitTimestamp = .zero
        }
        #expect(throws: expected) { try packet.validateResponse(origin: Self.origin) }
    }

    @Test("kiss-o'-death codes are recognised", arguments: [KissCode.rate, .deny, .restrict, KissCode("INIT")])
    func kissOfDeath(code: KissCode) throws {
        var packet = Self.response()
        packet.stratum = 0
        packet.leap = .unsynchronized
        packet.referenceID = code.rawValue
        let decoded = try NTPPacket(bytes: packet.encoded())
        #expect(decoded.kissCode == code)
        #expect(throws: NTPPacketError.kissOfDeath(code)) { try decoded.validateResponse(origin: Self.origin) }
        #expect(code.demandsStop == (code == .deny || code == .restrict))
        #expect(KissCode.rate.description == "RATE")
        #expect(KissCode.restrict.description == "RSTR")
    }

    @Test("a kiss-o'-death with the wrong origin is not believed")
    func spoofedKiss() {
        var packet = Self.response()
        packet.stratum = 0
        packet.referenceID = KissCode.deny.rawValue
        packet.originTimestamp = NTPTimestamp(rawValue: 7)
        #expect(throws: NTPPacketError.originMismatch) { try packet.validateResponse(origin: Self.origin) }
    }
}
