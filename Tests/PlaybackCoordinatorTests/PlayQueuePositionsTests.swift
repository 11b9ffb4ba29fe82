import Foundation
import Testing

@testable import PlaybackCoordinator

/// ``PlayQueue``'s edits worded by position (`coplay control INVITE queue add|remove|move`): the
/// edits name entry ids, so an edit made in between changes what they do only by removing entries.
@Suite("Play queue: edits by position")
struct PlayQueuePositionsTests {
    static func queue(_ ids: [String]) -> PlayQueue {
        var queue = PlayQueue()
        queue.apply(.add(ids.map { PlayQueueTests.entry($0) }, at: .end))
        return queue
    }

    static func applying(_ edits: [QueueEdit], to queue: PlayQueue) -> [String] {
        var queue = queue
        for edit in edits { queue.apply(edit) }
        return PlayQueueTests.ids(queue)
    }

    @Test("remove N names the entry at N; several positions, repeated ones once")
    func removeByPosition() throws {
        let queue = Self.queue(["a", "b", "c"])
        #expect(try queue.removal(ofPositions: [2]) == .remove(["b"]))
        #expect(try queue.removal(ofPositions: [3, 1, 3]) == .remove(["c", "a"]))
        #expect(Self.applying([try queue.removal(ofPositions: [2])], to: queue) == ["a", "c"])
    }

    @Test("a position the queue does not have is refused, saying how many entries there are", arguments: [0, 4, -1])
    func badPosition(position: Int) {
        let queue = Self.queue(["a", "b", "c"])
        #expect(throws: PlaybackCoordinatorError.noEntry("there is no entry \(position): the queue has 3")) {
            try queue.removal(ofPositions: [1, position])
        }
        #expect(throws: PlaybackCoordinatorError.noEntry("there is no entry \(position): the queue has 3")) {
            try queue.move(fromPosition: position, toPosition: 1)
        }
        #expect(throws: PlaybackCoordinatorError.noEntry("there is no entry \(position): the queue has 3")) {
            try queue.move(fromPosition: 1, toPosition: position)
        }
        #expect(throws: PlaybackCoordinatorError.noEntry("there is no entry 1: the queue is empty")) {
            try PlayQueue().removal(ofPositions: [1])
        }
    }

    @Test("move N M puts entry N at position M, whichever way it moves",
          arguments: [(1, 3), (3, 1), (2, 4), (4, 2), (1, 4), (4, 1), (2, 3), (3, 2)])
    func moveByPosition(from: Int, to: Int) throws {
        let ids = ["a", "b", "c", "d"]
        let queue = Self.queue(ids)
        let edit = try #require(try queue.move(fromPosition: from, toPosition: to))
        var expected = ids
        let moving = expected.remove(at: from - 1)
        expected.insert(moving, at: to - 1)
        #expect(Self.applying([edit], to: queue) == expected, "move \(from) \(to)")
    }

    @Test("a move to where the entry is changes nothing; a move in a shuffled queue is refused")
    func moveEdgeCases() throws {
        var queue = Self.queue(["a", "b", "c"])
        #expect(try queue.move(fromPosition: 2, toPosition: 2) == nil)
        queue.apply(.shuffle(seed: 7))
        #expect(throws: PlaybackCoordinatorError.self) { try queue.move(fromPosition: 1, toPosition: 2) }
    }

    @Test("a move or remove worked out before someone else's edit acts on the entry it named")
    func concurrentEdits() throws {
        let queue = Self.queue(["a", "b", "c", "d"])
        let remove = try queue.removal(ofPositions: [3])  // "c"
        let move = try #require(try queue.move(fromPosition: 4, toPosition: 1))  // "d" to the start
        // Someone removed "a" and "c" first: the remove changes nothing, the move still moves "d".
        var other = queue
        other.apply(.remove(["a", "c"]))
        #expect(Self.applying([remove, move], to: other) == ["d", "b"])
    }

    @Test("add: at the end, or after the playing entry with next; more than 200 entries in several edits, in order")
    func additions() throws {
        let queue = Self.queue(["a", "b", "c"])
        let new = (0..<450).map { PlayQueueTests.entry("n\($0)") }
        let atEnd = try queue.additions(new, next: false, playing: "b")
        #expect(atEnd.count == 3)
        #expect(Self.applying(atEnd, to: queue) == ["a", "b", "c"] + new.map(\.id))
        let next = try queue.additions(new, next: true, playing: "b")
        #expect(next.count == 3)
        #expect(Self.applying(next, to: queue) == ["a", "b"] + new.map(\.id) + ["c"])
        for edit in next {
            guard case .add(let entries, _) = edit else { Issue.record("not an add: \(edit)"); continue }
            #expect(entries.count <= QueueSnapshotPart.maximumEntries)
        }
    }

    @Test("next: after the playing entry; where a removed playing entry was; first when nothing plays; refused when shuffled")
    func afterPlaying() throws {
        var queue = Self.queue(["a", "b", "c"])
        #expect(queue.afterPlaying("b") == .after("b"))
        #expect(queue.afterPlaying(nil) == .start)
        #expect(PlayQueue().afterPlaying(nil) == .end)
        queue.apply(.remove(["b"]), playing: "b")
        #expect(queue.afterPlaying("b") == .after("a"))
        queue.apply(.remove(["a"]))
        #expect(queue.afterPlaying("b") == .start)
        queue.apply(.shuffle(seed: 3))
        #expect(throws: PlaybackCoordinatorError.self) { try queue.additions([PlayQueueTests.entry("x")], next: true, playing: "c") }
        #expect(try queue.additions([PlayQueueTests.entry("x")], next: false, playing: "c") == [.add([PlayQueueTests.entry("x")], at: .end)])
    }

    @Test("an entry keeps its adder's name through the wire; without one it is labelled by the id")
    func addedByName() throws {
        let named = QueueEntry(id: "e1", item: "clip", title: "Clip", addedBy: "0123456789abcdef", addedByName: "Ana")
        let data = try JSONEncoder().encode(named)
        #expect(try JSONDecoder().decode(QueueEntry.self, from: data) == named)
        #expect(named.addedByLabel == "Ana")
        let older = try JSONDecoder().decode(
            QueueEntry.self, from: Data(#"{"id":"e1","item":"clip","title":"Clip","addedBy":"0123456789abcdef"}"#.utf8))
        #expect(older.addedByName == nil && older.addedByLabel == "0123456789abcdef")
    }
}
