import Foundation
import Testing

@testable import PlaybackCoordinator

/// ``PlayQueue``: edits by entry id, play order, what plays next.
@Suite("Play queue")
struct PlayQueueTests {
    static func entry(_ id: String, _ item: String = "clip") -> QueueEntry {
        QueueEntry(id: id, item: item, title: id, duration: 3, frameRate: 25, addedBy: "m1")
    }

    static func ids(_ queue: PlayQueue) -> [String] { queue.playOrder.map(\.id) }

    @Test func addRemoveMoveByID() {
        var queue = PlayQueue()
        queue.apply(.add([Self.entry("a"), Self.entry("b"), Self.entry("c")], at: .end))
        queue.apply(.add([Self.entry("x")], at: .after("a")))
        #expect(Self.ids(queue) == ["a", "x", "b", "c"])
        queue.apply(.add([Self.entry("s")], at: .start))
        #expect(Self.ids(queue) == ["s", "a", "x", "b", "c"])
        // An entry id already queued is not added twice; the same item under another id is.
        queue.apply(.add([Self.entry("a"), Self.entry("a2", "clip")], at: .end))
        #expect(Self.ids(queue) == ["s", "a", "x", "b", "c", "a2"])
        queue.apply(.move("c", to: .start))
        #expect(Self.ids(queue) == ["c", "s", "a", "x", "b", "a2"])
        queue.apply(.move("c", to: .after("b")))
        #expect(Self.ids(queue) == ["s", "a", "x", "b", "c", "a2"])
        queue.apply(.remove(["x", "nothing"]))
        #expect(Self.ids(queue) == ["s", "a", "b", "c", "a2"])
    }

    @Test("an edit naming a removed entry changes nothing for it (concurrent remove, then move)")
    func editsOfRemovedEntries() {
        var queue = PlayQueue()
        queue.apply(.add([Self.entry("a"), Self.entry("b"), Self.entry("c")], at: .end))
        queue.apply(.remove(["b"]))
        let before = queue
        queue.apply(.move("b", to: .start))
        #expect(queue == before)
        // Moving after a removed anchor changes nothing either; adding after it appends.
        queue.apply(.move("a", to: .after("b")))
        #expect(queue == before)
        queue.apply(.add([Self.entry("d")], at: .after("b")))
        #expect(Self.ids(queue) == ["a", "c", "d"])
        queue.apply(.move("a", to: .after("a")))
        #expect(Self.ids(queue) == ["a", "c", "d"])
    }

    @Test("repeat off, one, all: what plays after an entry, next and previous")
    func repeatModes() {
        var queue = PlayQueue()
        queue.apply(.add([Self.entry("a"), Self.entry("b"), Self.entry("c")], at: .end))
        #expect(queue.entryAfterEnd(of: "a")?.id == "b")
        #expect(queue.entryAfterEnd(of: "c") == nil)
        #expect(queue.entryForNext(from: "c") == nil)
        #expect(queue.entryForPrevious(from: "a") == nil)
        #expect(queue.entryForNext(from: nil)?.id == "a")
        queue.apply(.repeatMode(.one))
        #expect(queue.entryAfterEnd(of: "b")?.id == "b")
        #expect(queue.entryForNext(from: "b")?.id == "c")
        queue.apply(.repeatMode(.all))
        #expect(queue.entryAfterEnd(of: "c")?.id == "a")
        #expect(queue.entryForNext(from: "c")?.id == "a")
        #expect(queue.entryForPrevious(from: "a")?.id == "c")
        #expect(queue.entry(atPosition: 2)?.id == "b")
        #expect(queue.entry(atPosition: 4) == nil)
        #expect(queue.position(of: "c") == 3)
    }

    @Test("removing the playing entry: the queue continues with the entry that followed it")
    func removedPlaying() {
        var queue = PlayQueue()
        queue.apply(.add([Self.entry("a"), Self.entry("b"), Self.entry("c")], at: .end))
        queue.apply(.remove(["b"]), playing: "b")
        #expect(queue.entryAfterEnd(of: "b")?.id == "c")
        queue.apply(.remove(["c"]), playing: "b")
        #expect(queue.entryAfterEnd(of: "b") == nil)
        queue.apply(.repeatMode(.all))
        #expect(queue.entryAfterEnd(of: "b")?.id == "a")
    }

    @Test("shuffle: one order from the seed, the same for every member, entries added later included")
    func shuffle() {
        var one = PlayQueue()
        let entries = (0..<20).map { Self.entry("m1.\($0)") }
        one.apply(.add(entries, at: .end))
        one.apply(.shuffle(seed: 42))
        var other = PlayQueue()
        other.apply(.add(Array(entries.reversed()), at: .end))
        other.apply(.shuffle(seed: 42))
        // The order depends on the seed and the ids, not on the list order.
        #expect(Self.ids(one) == Self.ids(other))
        #expect(Self.ids(one) != entries.map(\.id))
        #expect(Set(Self.ids(one)) == Set(entries.map(\.id)))
        var reseeded = one
        reseeded.apply(.shuffle(seed: 43))
        #expect(Self.ids(reseeded) != Self.ids(one))
        one.apply(.shuffle(seed: nil))
        #expect(Self.ids(one) == entries.map(\.id))
        // The key is FNV-1a 32 of "<seed>:<id>" (the page computes the same).
        #expect(PlayQueue.shuffleKey(seed: 42, id: "m1.0") == Self.fnv1a("42:m1.0"))
    }

    static func fnv1a(_ text: String) -> UInt32 {
        text.utf8.reduce(UInt32(0x811C_9DC5)) { ($0 ^ UInt32($1)) &* 16_777_619 }
    }

    @Test("a 1,000-entry queue travels in parts inside the message size limit")
    func snapshotParts() throws {
        var queue = PlayQueue()
        let entries = (0..<1_000).map { index in
            QueueEntry(
                id: "3f2a9c1e-5b7d-4e8a-9c0b-1d2e3f4a5b6c.1790000000123456789.\(index)",
                item: "v2:1234567890:" + String(repeating: "ab", count: 32), title: "Episode \(index) - A Rather Long Title.mkv",
                duration: 1_234.5, frameRate: 23.976, addedBy: "3f2a9c1e-5b7d-4e8a-9c0b-1d2e3f4a5b6c")
        }
        queue.apply(.add(entries, at: .end))
        let parts = QueueSnapshotPart.parts(of: queue, snapshot: "s", request: 7, through: 7, sentAt: ReferenceTime(nanoseconds: 1))
        #expect(parts.count == 5)
        let encoder = JSONEncoder()
        for part in parts {
            let size = try encoder.encode(CoordinationMessage.queueSnapshot(part)).count
            #expect(size < 128 * 1024, "part \(part.part) is \(size) bytes")
        }
        #expect(QueueSnapshotPart.assemble(parts.reversed()) == queue)
        #expect(QueueSnapshotPart.assemble(Array(parts.dropLast())) == nil)
        // An empty queue is one part.
        #expect(QueueSnapshotPart.parts(of: PlayQueue(), snapshot: "e", request: nil, through: 1, sentAt: ReferenceTime(nanoseconds: 1)).count == 1)
    }
}
