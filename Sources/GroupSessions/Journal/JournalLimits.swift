/// The journal limits a `SessionHub` enforces (`docs/protocol.md`, "Journal").
///
/// ```swift
/// var limits = HubLimits()
/// limits.journal.quota = 64 << 20
/// ```
public struct JournalLimits: Hashable, Sendable {
    /// Largest attachment (plaintext bytes): 100 MiB.
    public var maximumAttachmentSize: Int = 100 << 20
    /// Bytes the relay stores for one session's journal (sealed chunks + metadata, uploads in
    /// progress included): 256 MiB.
    public var quota: Int = 256 << 20
    /// Largest plaintext chunk an uploader may announce: 256 KiB.
    public var maximumChunkSize: Int = 256 << 10
    /// Most chunks one fetch may ask for (the receiver's window).
    public var maximumFetchWindow: Int = 64
    /// Most attachments (stored or uploading) per session.
    public var maximumAttachments: Int = 1_024
    /// Largest sealed metadata per attachment.
    public var maximumMetadataSize: Int = 4_096

    /// The defaults above.
    public init() {}
}
