import Crypto
import Foundation
import NIOCore

/// Seals and opens one attachment's metadata and chunks with the session's ``PayloadSuite``.
///
/// The key is derived from the uploader's payload key (``SessionKeys/payloadKey(for:)``) with
/// HKDF-SHA256, salt = the attachment id, info = `coplay v1 journal`: one key per uploader and
/// attachment, so a nonce is simply the chunk index (metadata uses the all-ones nonce). The
/// associated data binds the session, the attachment id, the uploader, the total size, the
/// chunk size and the chunk index, so a chunk cannot be moved to another index, another
/// attachment or another session, and a header whose size was altered fails to open.
/// A relay that drops chunks cannot shorten an attachment either: the reader knows the
/// chunk count from the sealed metadata and waits for every chunk.
///
/// ```swift
/// let cipher = JournalCipher(keys: keys, id: id, uploader: me)
/// let sealed = try cipher.sealChunk(bytes[...], index: 0, size: 10, chunkSize: 65_536)
/// let plain = try cipher.openChunk(sealed, index: 0, size: 10, chunkSize: 65_536)
/// ```
public struct JournalCipher: Sendable {
    /// The session.
    public let session: SessionID
    /// The attachment.
    public let id: AttachmentID
    /// Who uploaded it (its key derives the attachment key).
    public let uploader: ParticipantID
    /// The algorithm (the session's suite).
    public let suite: PayloadSuite
    // Raw key bytes: SymmetricKey is not Sendable on every platform.
    private let key: [UInt8]

    /// Derives the attachment key.
    public init(keys: SessionKeys, id: AttachmentID, uploader: ParticipantID) {
        self.session = keys.session
        self.id = id
        self.uploader = uploader
        self.suite = keys.suite
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: keys.payloadKey(for: uploader), salt: id.bytes, info: Array("coplay v1 journal".utf8),
            outputByteCount: 32
        ).withUnsafeBytes { Array($0) }
    }

    private static let metadataIndex = UInt64.max

    private func associatedData(kind: UInt8, size: UInt64, chunkSize: UInt32, index: UInt64) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeBytes(Array("coplay v1 journal".utf8))
        buffer.writeInteger(kind)
        buffer.writeInteger(session.high)
        buffer.writeInteger(session.low)
        id.write(to: &buffer)
        buffer.writeInteger(uploader.rawValue)
        buffer.writeInteger(size)
        buffer.writeInteger(chunkSize)
        buffer.writeInteger(index)
        return Array(buffer.readableBytesView)
    }

    private static func nonce(_ index: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: index == metadataIndex ? 0xFF : 0, count: 12)
        withUnsafeBytes(of: index.bigEndian) { bytes.replaceSubrange(4..<12, with: $0) }
        return bytes
    }

    /// Seals the metadata.
    public func sealMetadata(_ metadata: AttachmentMetadata) throws -> [UInt8] {
        try AEAD.seal(
            metadata.encoded(), suite: suite, key: SymmetricKey(data: key), nonce: Self.nonce(Self.metadataIndex),
            authenticating: associatedData(kind: 1, size: metadata.size, chunkSize: metadata.chunkSize, index: Self.metadataIndex))
    }

    /// Opens the metadata of an announced attachment and checks it against the clear header.
    ///
    /// - Throws: A CryptoKit error if the metadata or the header was altered, or
    ///   ``GroupSessionError`` if the sealed values disagree with the header.
    public func openMetadata(of header: JournalHeader) throws -> AttachmentMetadata {
        let sealed = header.sealedMetadata
        guard sealed.count >= 16 else { throw GroupSessionError.protocolViolation("attachment metadata is truncated") }
        let plaintext = try AEAD.open(
            sealed, suite: suite, key: SymmetricKey(data: key), nonce: Self.nonce(Self.metadataIndex),
            authenticating: associatedData(kind: 1, size: header.size, chunkSize: header.chunkSize, index: Self.metadataIndex))
        let metadata = try AttachmentMetadata(decoding: plaintext)
        guard metadata.size == header.size, metadata.chunkSize == header.chunkSize else {
            throw GroupSessionError.protocolViolation("attachment header disagrees with its sealed metadata")
        }
        return metadata
    }

    /// Seals chunk `index` of an attachment of `size` bytes cut in `chunkSize` pieces.
    ///
    /// - Returns: Ciphertext followed by the 16-byte tag.
    public func sealChunk(
        _ plaintext: some DataProtocol, index: Int, size: UInt64, chunkSize: UInt32
    ) throws -> ByteBuffer {
        let sealed = try AEAD.seal(
            plaintext, suite: suite, key: SymmetricKey(data: key), nonce: Self.nonce(UInt64(index)),
            authenticating: associatedData(kind: 2, size: size, chunkSize: chunkSize, index: UInt64(index)))
        return ByteBuffer(bytes: sealed)
    }

    /// Opens chunk `index`.
    ///
    /// - Throws: A CryptoKit error if the chunk was altered, belongs to another index,
    ///   attachment or session, or the sizes differ from the sealing ones.
    public func openChunk(_ sealed: ByteBuffer, index: Int, size: UInt64, chunkSize: UInt32) throws -> Data {
        guard sealed.readableBytes >= 16 else { throw GroupSessionError.protocolViolation("chunk \(index) is truncated") }
        let plaintext = try AEAD.open(
            sealed.readableBytesView, suite: suite, key: SymmetricKey(data: key), nonce: Self.nonce(UInt64(index)),
            authenticating: associatedData(kind: 2, size: size, chunkSize: chunkSize, index: UInt64(index)))
        return Data(plaintext)
    }
}
