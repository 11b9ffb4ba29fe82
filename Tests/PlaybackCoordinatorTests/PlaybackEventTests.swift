import PropertyBased
import Testing

@testable import PlaybackCoordinator

@Suite("PlaybackEvent JSON Lines")
struct PlaybackEventTests {
    @Test("a frame event prints the documented line")
    func frameLine() {
        let event = PlaybackEvent(type: .frame, realtime: 1_763_850_000.25, index: 3, pts: 0.12)
        #expect(event.jsonLine == #"{"type":"frame","v":2,"realtime":1763850000.25,"index":3,"pts":0.12}"#)
    }

    @Test("every line has type, v and realtime first, and escapes strings")
    func fieldsAndEscaping() throws {
        let event = PlaybackEvent(
            type: .suspensionBegan, realtime: 2, player: "a\"b", originator: "line\nbreak", reason: "custom:x\\y", waits: true)
        #expect(event.jsonLine.hasPrefix(#"{"type":"suspensionBegan","v":2,"realtime":2.0,"#))
        #expect(event.jsonLine.contains(#""player":"a\"b""#))
        #expect(event.jsonLine.contains(#""originator":"line\nbreak""#))
        #expect(try PlaybackEvent(jsonLine: event.jsonLine) == event)
    }

    @Test("events survive a round trip through their JSON line")
    func roundTrip() async {
        await propertyCheck(
            input: Gen.element(of: PlaybackEvent.EventType.allCases), Gen.double(in: 0...2e9), Gen.int(in: 0...100_000),
            Gen.double(in: -5...5)
        ) { type, realtime, index, error in
            let event = PlaybackEvent(
                type: type ?? .frame, realtime: realtime, player: "p", item: "clip", rate: 1.5, referenceTime: realtime / 3,
                revision: UInt64(index), index: index, pts: Double(index) / 25, errorMs: error)
            #expect(try! PlaybackEvent(jsonLine: event.jsonLine) == event)
        }
    }

    @Test("non-finite numbers are left out rather than written as invalid JSON")
    func nonFinite() {
        let line = PlaybackEvent(type: .correction, realtime: 1, errorMs: .nan).jsonLine
        #expect(!line.contains("errorMs"))
    }
}
