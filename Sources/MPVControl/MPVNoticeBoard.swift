/// The notices an mpv member shows on mpv's screen: the last few, each for a few seconds, drawn as
/// an `osd-overlay` of its own (mpv's `show-text` messages, "Paused" and the like, stay mpv's).
///
/// Sans-IO: ``MPVPlayer`` adds texts and asks for the overlay; times are the caller's seconds.
///
/// ```swift
/// var board = MPVNoticeBoard()
/// board.add("alice paused at 12:34", now: 10)
/// board.ass          // {\an9\fs30\bord2}alice paused at 12:34
/// board.expire(now: 16)  // true: the overlay changed (now empty)
/// ```
public struct MPVNoticeBoard: Sendable, Equatable {
    /// How long a notice stays (seconds).
    public var duration: Double
    /// How many notices are shown at once (the oldest goes first).
    public var capacity: Int

    /// The notices shown, oldest first, with when each goes.
    public private(set) var lines: [(text: String, until: Double)] = []

    /// Creates a board.
    public init(duration: Double = 5, capacity: Int = 4) {
        self.duration = duration
        self.capacity = capacity
    }

    public static func == (lhs: MPVNoticeBoard, rhs: MPVNoticeBoard) -> Bool {
        lhs.duration == rhs.duration && lhs.capacity == rhs.capacity
            && lhs.lines.map(\.text) == rhs.lines.map(\.text) && lhs.lines.map(\.until) == rhs.lines.map(\.until)
    }

    /// Adds a notice at `now` (seconds).
    public mutating func add(_ text: String, now: Double) {
        lines.append((text, now + duration))
        if lines.count > capacity { lines.removeFirst(lines.count - capacity) }
    }

    /// Drops the notices due to go at `now`; `true` when any went.
    public mutating func expire(now: Double) -> Bool {
        let before = lines.count
        lines.removeAll { $0.until <= now }
        return lines.count != before
    }

    /// When the next notice goes, if any.
    public var nextExpiry: Double? { lines.map(\.until).min() }

    /// The notices as plain text, one a line (what a test or a script reads back).
    public var text: String { lines.map(\.text).joined(separator: "\n") }

    /// The notices as ASS events for `osd-overlay`: top right, newest last, text escaped so that
    /// nothing in a name or a chat message is read as an override tag. Empty when there is none.
    public var ass: String {
        guard !lines.isEmpty else { return "" }
        return "{\\an9\\fs30\\bord2}" + lines.map { Self.escaped($0.text) }.joined(separator: "\\N")
    }

    /// `text` with ASS's specials made literal (as mpv's own scripts do): a backslash followed by a
    /// zero-width no-break space, `{` as `\{`, newlines as `\N`.
    public static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\": result += "\\\u{FEFF}"
            case "{": result += "\\{"
            case "\n", "\r": result += "\\N"
            default: result.append(character)
            }
        }
        return result
    }
}
