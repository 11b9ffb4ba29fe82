import Foundation
import Testing

@testable import SyncBench

@Suite("PlayerEventStream: JSON Lines")
struct PlayerEventStreamTests {
    @Test("the documented frame line parses, and unknown types and fields are kept or ignored")
    func parse() throws {
        let text = """
            {"type":"frame","index":7,"pts":0.28,"realtime":1700000000.5,"player":"a"}

            {"type":"joined","realtime":1700000000.0,"extra":{"x":1}}
            {"type":"command","action":"seek","target":12.5,"realtime":1700000001}
            """
        let stream = try PlayerEventStream(player: "a", jsonLines: Data(text.utf8))
        #expect(stream.events.count == 3)
        #expect(stream.events[0] == .frame(index: 7, pts: 0.28, realtime: 1_700_000_000.5, player: "a"))
        #expect(stream.events[1].type == "joined")
        #expect(stream.events[2].player == "a")
        #expect(stream.events[2].target == 12.5)
    }

    @Test("a player's own nearCopy line (originator = player) marks a stream that is not frame-identical; another member's does not")
    func nearCopy() throws {
        let own = #"{"type":"nearCopy","v":1,"realtime":1,"player":"bob","originator":"bob","originatorId":"4286b046ed731588","item":"v3:ab","detail":"x.mp4, duration +0.040 s"}"#
        let other = #"{"type":"nearCopy","v":1,"realtime":1,"player":"alice","originator":"bob","originatorId":"4286b046ed731588","item":"v3:ab"}"#
        #expect(try PlayerEventStream(player: "bob", jsonLines: Data(own.utf8)).events.contains(where: \.isOwnNearCopy))
        #expect(try !PlayerEventStream(player: "alice", jsonLines: Data(other.utf8)).events.contains(where: \.isOwnNearCopy))
    }

    @Test("a malformed line is an error naming the player and line number")
    func malformed() {
        let text = "{\"type\":\"frame\",\"realtime\":1}\n{\"type\":\"frame\"}\n"
        #expect {
            _ = try PlayerEventStream(player: "b", jsonLines: Data(text.utf8))
        } throws: { error in
            String(describing: error).contains("event stream of b, line 2")
        }
    }

    @Test("writing and reading JSON Lines round-trips")
    func roundTrip() throws {
        let stream = PlayerEventStream(
            player: "a",
            events: frames("a", count: 5) + [.command("pause", id: "c1", realtime: 2000, player: "a")])
        let again = try PlayerEventStream(player: "a", jsonLines: stream.jsonLines())
        #expect(again == stream)
    }
}
