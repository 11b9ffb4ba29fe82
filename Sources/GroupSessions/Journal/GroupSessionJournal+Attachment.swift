import Foundation

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
        /// The journal connection it was announced on, which ``load(_:)-(Data.Type)`` reads through
        /// (not part of the attachment's identity). Weak: the connection keeps its attachments.
        weak let client: JournalClient?

        init(
            id: AttachmentID, size: Int, uploader: Participant, label: String, digest: [UInt8], chunkSize: UInt32, sequence: UInt64,
            client: JournalClient
        ) {
            self.id = id
            self.size = size
            self.uploader = uploader
            self.label = label
            self.digest = digest
            self.chunkSize = chunkSize
            self.sequence = sequence
            self.client = client
        }

        public static func == (lhs: Attachment, rhs: Attachment) -> Bool {
            lhs.id == rhs.id && lhs.size == rhs.size && lhs.uploader == rhs.uploader && lhs.label == rhs.label
                && lhs.digest == rhs.digest && lhs.chunkSize == rhs.chunkSize && lhs.sequence == rhs.sequence
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(id)
            hasher.combine(sequence)
        }

        /// Downloads the attachment's bytes (Apple's `attachment.load(Data.self)`): the same as
        /// ``GroupSessionJournal/load(_:progress:)``, checked against ``digest``.
        ///
        /// ```swift
        /// for await attachments in journal.attachments {
        ///     for attachment in attachments { let bytes = try await attachment.load(Data.self) }
        /// }
        /// ```
        ///
        /// - Throws: ``GroupSessionError`` if the relay no longer has it, or a chunk was tampered
        ///   with, reordered or missing.
        public func load(_ type: Data.Type) async throws -> Data {
            guard let client else { throw GroupSessionError.invalidated("the session this attachment came from is gone") }
            var data = Data(capacity: size)
            for try await chunk in AttachmentChunks(client: client, attachment: self) { data.append(chunk) }
            return data
        }

        /// Downloads an attachment added with ``GroupSessionJournal/add(_:)-(Value)`` and decodes its
        /// JSON (Apple's `attachment.load(Value.self)`, with `Decodable` for `Transferable`).
        public func load<Value: Decodable>(_ type: Value.Type) async throws -> Value {
            try JSONDecoder().decode(Value.self, from: await load(Data.self))
        }

        var header: JournalHeader { JournalHeader(id: id, size: UInt64(size), chunkSize: chunkSize, sealedMetadata: []) }

        public var description: String { "Attachment(\(id), \(size) bytes, \(label.isEmpty ? "unlabelled" : label))" }
    }
}
