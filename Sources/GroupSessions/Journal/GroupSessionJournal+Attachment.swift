extension GroupSessionJournal {
    /// One attachment in a session's journal, as every member sees it.
    ///
    /// Everything here except ``id`` and ``size`` was sealed by the uploader; a member lists
    /// an attachment only once its sealed metadata opened and matched the relay's header.
    public struct Attachment: Identifiable, Hashable, Sendable, CustomStringConvertible {
        /// The attachment's identifier (random, chosen by the uploader).
        public let id: AttachmentID
        /// Size in bytes.
        public let size: Int
        /// The member that added it.
        public let uploader: Participant
        /// The label given to ``GroupSessionJournal/add(_:label:progress:)`` (the Codable
        /// convenience stores the type name).
        public let label: String
        /// SHA-256 of the bytes, checked by ``GroupSessionJournal/load(_:progress:)``.
        public let digest: [UInt8]
        /// Bytes per chunk on the wire.
        let chunkSize: UInt32
        /// The relay's stamp of the announcement (list order).
        let sequence: UInt64

        var header: JournalHeader { JournalHeader(id: id, size: UInt64(size), chunkSize: chunkSize, sealedMetadata: []) }

        public var description: String { "Attachment(\(id), \(size) bytes, \(label.isEmpty ? "unlabelled" : label))" }
    }
}
