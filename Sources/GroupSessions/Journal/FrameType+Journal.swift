/// Journal frame types (`docs/protocol.md`, "Journal"): the range 0x20-0x2F.
///
/// A member or relay that does not know these types ignores them (members) or answers
/// ``RelayErrorCode/unsupportedType`` (relays), so an older peer never breaks.
extension FrameType {
    /// Client to relay: start uploading an attachment (token, header, sealed metadata).
    public static let journalPut = FrameType(rawValue: 0x20)
    /// Client to relay (upload) and relay to client (download): one sealed chunk.
    public static let journalChunk = FrameType(rawValue: 0x21)
    /// Relay to uploader: a chunk is stored; the uploader may send one more.
    public static let journalAck = FrameType(rawValue: 0x22)
    /// Relay to members: an attachment is complete (stamped; replayed at admission).
    public static let journalAdded = FrameType(rawValue: 0x23)
    /// Client to relay: delete an attachment.
    public static let journalRemove = FrameType(rawValue: 0x24)
    /// Relay to members: an attachment was deleted (stamped).
    public static let journalRemoved = FrameType(rawValue: 0x25)
    /// Client to relay: send me chunks `first ..< first + count` of an attachment.
    public static let journalFetch = FrameType(rawValue: 0x26)

    /// Whether the type lies in the journal range 0x20-0x2F.
    public var isJournal: Bool { (0x20...0x2F).contains(rawValue) }
}
