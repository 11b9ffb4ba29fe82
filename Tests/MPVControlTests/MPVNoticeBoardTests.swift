import MPVControl
import Testing

@Suite("The notice board on mpv's screen")
struct MPVNoticeBoardTests {
    @Test("notices stay their time, the newest last, at most the capacity")
    func lifetime() {
        var board = MPVNoticeBoard(duration: 5, capacity: 2)
        #expect(board.ass.isEmpty)
        board.add("alice paused at 12:34", now: 10)
        board.add("bob moved to 1:02:03", now: 11)
        #expect(board.text == "alice paused at 12:34\nbob moved to 1:02:03")
        #expect(board.ass == "{\\an9\\fs30\\bord2}alice paused at 12:34\\Nbob moved to 1:02:03")
        #expect(board.nextExpiry == 15)
        var changed = board.expire(now: 14.9)
        #expect(!changed)
        changed = board.expire(now: 15)
        #expect(changed)
        #expect(board.text == "bob moved to 1:02:03")
        board.add("carol changed the speed to 1.25×", now: 12)
        board.add("dave joined", now: 13)
        #expect(board.text == "carol changed the speed to 1.25×\ndave joined")
        changed = board.expire(now: 100)
        #expect(changed)
        #expect(board.ass.isEmpty)
        #expect(board.nextExpiry == nil)
    }

    @Test("names and chat text cannot inject override tags or lines")
    func escaping() {
        #expect(MPVNoticeBoard.escaped("{\\an5}big") == "\\{\\\u{FEFF}an5}big")
        #expect(MPVNoticeBoard.escaped("a\nb") == "a\\Nb")
        var board = MPVNoticeBoard()
        board.add("eve: {\\fs200}", now: 0)
        #expect(board.ass.hasSuffix("eve: \\{\\\u{FEFF}fs200}"))
    }
}
