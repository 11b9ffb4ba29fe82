import MPVControl
import PlaybackCoordinator
import Testing

/// mpv's playlist as the group's queue, without an mpv: which entries, in which order, with which
/// titles, and the commands that show them while the playing file stays.
@Suite("MPVPlaylist: the group's queue in mpv's playlist")
struct MPVPlaylistTests {
    static func queue(_ entries: [(String, String, String)]) -> PlayQueue {
        var queue = PlayQueue()
        queue.apply(.add(entries.map { QueueEntry(id: $0.0, item: $0.1, title: $0.2, addedBy: "host") }, at: .end), playing: nil)
        return queue
    }

    @Test("only the entries this member has a file for, in play order, titled; the same file queued twice is two lines")
    func entries() {
        let queue = Self.queue([("e1", "a", "Alpha"), ("e2", "b", "Bravo"), ("e3", "c", "Charlie"), ("e4", "a", "Alpha again")])
        let playlist = MPVPlaylist(queue: queue, paths: ["a": "/m/a.mp4", "c": "/m/c.mp4"])
        #expect(playlist.entries.map(\.entry) == ["e1", "e3", "e4"])
        #expect(playlist.entries.map(\.title) == ["Alpha", "Charlie", "Alpha again"])
        #expect(MPVPlaylist.m3u(playlist.entries[...]) == "memory://#EXTM3U\n#EXTINF:-1,Alpha\n/m/a.mp4\n#EXTINF:-1,Charlie\n/m/c.mp4\n#EXTINF:-1,Alpha again\n/m/a.mp4\n")
    }

    @Test("the playing file keeps playing: cleared around it, the rest appended, moved back to its place")
    func steps() {
        let queue = Self.queue([("e1", "a", "A"), ("e2", "b", "B"), ("e3", "c", "C")])
        let playlist = MPVPlaylist(queue: queue, paths: ["a": "/m/a.mp4", "b": "/m/b.mp4", "c": "/m/c.mp4"])
        let steps = playlist.steps(current: "/m/b.mp4", playing: "e2").map { $0.map { "\($0)" } }
        #expect(steps == [
            ["playlist-clear"], ["loadlist", "memory://#EXTM3U\n#EXTINF:-1,A\n/m/a.mp4\n#EXTINF:-1,C\n/m/c.mp4\n", "append"],
            ["playlist-move", "0", "2"],
        ])
        #expect(playlist.shown(current: "/m/b.mp4") == ["e1", "e2", "e3"])
        // The first entry plays: nothing to move.
        #expect(playlist.steps(current: "/m/a.mp4").count == 2)
        // A file that is none of the group's stays first.
        #expect(playlist.shown(current: "/home/x.mkv") == [nil, "e1", "e2", "e3"])
        #expect(playlist.index(of: "e3", current: "/home/x.mkv") == 3)
    }

    @Test("mpv's playlist read back: shown when the same files carry the same titles in order (the playing entry's title aside)")
    func isShown() {
        let queue = Self.queue([("e1", "a", "A"), ("e2", "b", "B")])
        let playlist = MPVPlaylist(queue: queue, paths: ["a": "/m/a.mp4", "b": "/m/b.mp4"])
        #expect(playlist.isShown(by: [.init(filename: "a.mp4", current: true), .init(filename: "/m/b.mp4", current: false, title: "B")], workingDirectory: "/m"))
        #expect(!playlist.isShown(by: [.init(filename: "/m/a.mp4", current: true), .init(filename: "/m/b.mp4", current: false)], workingDirectory: "/m"))
        #expect(!playlist.isShown(by: [.init(filename: "/m/b.mp4", current: true, title: "B"), .init(filename: "/m/a.mp4", current: false, title: "A")], workingDirectory: "/m"))
        #expect(playlist.isShown(by: [.init(filename: "/x/other.mkv", current: true), .init(filename: "/m/a.mp4", current: false, title: "A"), .init(filename: "/m/b.mp4", current: false, title: "B")], workingDirectory: "/m"))
    }

    @Test("the line to play: the group's entry when it is the item's, else the item's first line, else none; a 1,000-entry queue in linear time")
    func playIndex() {
        let queue = Self.queue([("e1", "a", "A"), ("e2", "b", "B"), ("e3", "a", "A again"), ("e4", "c", "C")])
        let playlist = MPVPlaylist(queue: queue, paths: ["a": "/m/a.mp4", "b": "/m/b.mp4"])
        let shown = playlist.shown(current: "/home/x.mkv")  // [nil, e1, e2, e3]
        #expect(playlist.playIndex(of: "a", preferring: "e3", in: shown) == 3)
        #expect(playlist.playIndex(of: "a", preferring: "e2", in: shown) == 1)  // e2 is b's: a's first line
        #expect(playlist.playIndex(of: "a", preferring: nil, in: shown) == 1)
        #expect(playlist.playIndex(of: "b", preferring: "e4", in: shown) == 2)
        #expect(playlist.playIndex(of: "c", preferring: "e4", in: shown) == nil)  // no file for c
        // The queue of the benchmark: 1,000 entries of 5 files, the group's entry the last. The lookup
        // runs between pausing the entry on screen and opening the next: it used to compare every line
        // with every entry (a million comparisons, seconds in a debug build under load).
        let long = Self.queue((1...1_000).map { ("e\($0)", "f\($0 % 5)", "clip \($0)") })
        let paths = Dictionary(uniqueKeysWithValues: (0..<5).map { ("f\($0)", "/m/f\($0).mp4") })
        let big = MPVPlaylist(queue: long, paths: paths)
        let lines = big.shown(current: "/m/f1.mp4")
        let clock = ContinuousClock()
        var index: Int?
        let took = clock.measure { index = big.playIndex(of: "f0", preferring: "e1000", in: lines) }
        #expect(index == 999)
        print("playIndex over 1,000 lines took \(took)")
    }
}
