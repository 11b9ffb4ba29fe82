/// Journal error codes (`docs/protocol.md`, "Journal"): the range 30-39.
///
/// A journal error frame's `senderSequence` carries the request token of the journal
/// operation it refuses (tokens have their top bit set, so they never collide with a data
/// frame's sender sequence).
extension RelayErrorCode {
    /// The attachment is larger than the relay accepts; the upload is refused.
    public static let attachmentTooLarge = RelayErrorCode(rawValue: 30)
    /// No such attachment in the session's journal (never added, or removed).
    public static let attachmentNotFound = RelayErrorCode(rawValue: 31)
    /// An upload broke the transfer rules (chunk out of order, wrong length, duplicate id);
    /// the partial upload is discarded.
    public static let journalTransferInvalid = RelayErrorCode(rawValue: 32)
    /// The relay could not store or read the attachment; the operation is refused.
    public static let journalStorageFailed = RelayErrorCode(rawValue: 33)

    /// Whether the code lies in the journal range 30-39.
    public var isJournal: Bool { (30...39).contains(rawValue) }
}
