import NIOCore

/// What an uploader seals about an attachment: only members can read it.
///
/// Layout (plaintext, inside the sealed box): `version u8 (1) | size u64 | chunkSize u32 |
/// sha256 (32) | labelLength u16 | label (UTF-8) | extension (rest, ignored)`.
/// `size` and `chunkSize` repeat the clear-text header so a relay that alters the header is
/// caught; `sha256` is the digest of the whole plaintext, checked after a full load.
public struct AttachmentMetadata: Hashable, Sendable {
    /// Plaintext bytes.
    public var size: UInt64
    /// Plaintext bytes per chunk.
    public var chunkSize: UInt32
    /// SHA-256 of the plaintext.
    public var digest: [UInt8]
    /// A free-form label chosen by the uploader (the Codable convenience stores the type name).
    public var label: String

    /// Creates metadata.
    public init(size: UInt64, chunkSize: UInt32, digest: [UInt8], label: String) {
        self.size = size
        self.chunkSize = chunkSize
        self.digest = digest
        self.label = label
    }

    /// Serializes the metadata.
    public func encoded() -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt8(1))
        buffer.writeInteger(size)
        buffer.writeInteger(chunkSize)
        buffer.writeBytes(digest.prefix(32))
        let label = Array(label.utf8.prefix(Int(UInt16.max)))
        buffer.writeInteger(UInt16(label.count))
        buffer.writeBytes(label)
        return Array(buffer.readableBytesView)
    }

    /// Parses metadata; versions other than 1 are refused.
    public init(decoding bytes: [UInt8]) throws(PayloadDecodingError) {
        var buffer = ByteBuffer(bytes: bytes)
        guard let version = buffer.readInteger(as: UInt8.self), let size = buffer.readInteger(as: UInt64.self),
            let chunkSize = buffer.readInteger(as: UInt32.self), let digest = buffer.readBytes(length: 32),
            let labelLength = buffer.readInteger(as: UInt16.self), let label = buffer.readBytes(length: Int(labelLength))
        else { throw .truncated(.journalAdded, "attachment metadata") }
        guard version == 1 else { throw .invalid(.journalAdded, "attachment metadata version \(version)") }
        self.init(size: size, chunkSize: chunkSize, digest: digest, label: String(decoding: label, as: UTF8.self))
    }
}
