/// The rules a chat text and a member's name follow, the same in Swift and in the page
/// (`Web/static/session/chat.js`): what a person may send and what a member accepts.
///
/// - Length is counted in Unicode scalars (code points): a text has at most ``maximumLength``
///   (500), a name at most ``maximumNameLength`` (64). An emoji is one or a few scalars.
/// - Cleaning (``cleaned(_:)``) turns line breaks and tabs into spaces, removes the other control
///   characters (C0, DEL, C1) and the invisible formatting characters that reorder or hide text
///   (bidirectional overrides and isolates, zero-width space, word joiner, BOM, interlinear
///   annotation), keeps everything else (emoji with their joiners and variation selectors, every
///   script), and trims spaces at both ends.
/// - A sender cleans its text and refuses an empty or too long one with a ``ChatError``; a receiver
///   ignores a message whose text or name is not clean already (``isClean(_:)``) or too long.
public enum ChatText {
    /// The most Unicode scalars in a message's text.
    public static let maximumLength = 500
    /// The most Unicode scalars in a member's name.
    public static let maximumNameLength = 64

    /// Scalars that become a space: tab, line feed, vertical tab, form feed, carriage return, next
    /// line, line and paragraph separators.
    static let breaks: Set<UInt32> = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029]

    /// Invisible formatting characters that are removed (reordering, hiding text).
    static let invisible: Set<UInt32> = Set([0x061C, 0x180E, 0x200B, 0x200E, 0x200F, 0xFEFF, 0xFFF9, 0xFFFA, 0xFFFB])
        .union(0x202A...0x202E).union(0x2060...0x2064).union(0x2066...0x2069)

    /// Spaces trimmed at both ends (Unicode's space separators).
    static let spaces: Set<UInt32> = Set([0x20, 0xA0, 0x1680, 0x202F, 0x205F, 0x3000]).union(0x2000...0x200A)

    /// The text with line breaks as spaces, control and invisible formatting characters removed,
    /// and spaces at both ends trimmed.
    public static func cleaned(_ text: String) -> String {
        var scalars: [Unicode.Scalar] = []
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if breaks.contains(value) {
                scalars.append(" ")
            } else if value < 0x20 || (0x7F...0x9F).contains(value) || invisible.contains(value) {
                continue
            } else {
                scalars.append(scalar)
            }
        }
        var start = 0
        var end = scalars.count
        while start < end && spaces.contains(scalars[start].value) { start += 1 }
        while end > start && spaces.contains(scalars[end - 1].value) { end -= 1 }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars[start..<end])
        return String(result)
    }

    /// Whether `text` is what ``cleaned(_:)`` makes of it (scalar for scalar).
    public static func isClean(_ text: String) -> Bool {
        Array(cleaned(text).unicodeScalars) == Array(text.unicodeScalars)
    }

    /// The length rules count: Unicode scalars.
    public static func length(_ text: String) -> Int { text.unicodeScalars.count }

    /// A text a member may send: cleaned, not empty, at most ``maximumLength``.
    ///
    /// - Throws: ``ChatError`` for an empty text or one that is too long.
    public static func sendable(_ text: String) throws(ChatError) -> String {
        let clean = cleaned(text)
        guard !clean.isEmpty else { throw .emptyMessage() }
        let length = length(clean)
        guard length <= maximumLength else { throw .tooLong(length) }
        return clean
    }

    /// A name a member may use: cleaned, not empty, at most ``maximumNameLength``.
    ///
    /// - Throws: ``ChatError`` for an empty name or one that is too long.
    public static func name(_ name: String) throws(ChatError) -> String {
        let clean = cleaned(name)
        guard !clean.isEmpty else { throw .badName(name) }
        guard length(clean) <= maximumNameLength else { throw .badName(name) }
        return clean
    }
}
