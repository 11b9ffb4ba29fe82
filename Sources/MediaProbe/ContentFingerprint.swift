import Crypto

/// A cheap identity for a media file, so participants can tell that they hold the same media.
///
/// It combines the file size and a SHA-256 of the first and last ``chunkSize`` bytes (the whole
/// file when it is smaller than two chunks). Reading two chunks costs the same for a 50 kB clip
/// and a 50 GB film, and needs nothing but the bytes, so a browser computes the same value with
/// WebCrypto (`Web/static/player/fingerprint.js`). Two different files could in principle collide only
/// if they have the same size, head and tail.
///
/// The string form is `v2:<size>:<sha256 hex>`, stable across machines and versions of coplay.
/// The first form, `v1:<size>:<duration µs or ->:<sha256 hex>`, also carried libavformat's
/// duration, which a browser cannot reproduce; it is still read, and a v1 and a v2 fingerprint of
/// the same bytes are equal: values compare size and digest only.
///
/// ```swift
/// let mine = info.fingerprint
/// if mine == ContentFingerprint(theirs) { print("same media") }
/// ```
public struct ContentFingerprint: Sendable, Hashable, Codable, LosslessStringConvertible {
    /// Bytes hashed at each end of the file.
    public static let chunkSize = 64 * 1024

    /// The file size in bytes.
    public let size: Int64
    /// The container duration in microseconds, when a `v1` fingerprint carried it (informational:
    /// not part of the identity).
    public let durationMicroseconds: Int64?
    /// Lower-case hex SHA-256 of the head chunk followed by the tail chunk.
    public let digest: String

    /// Computes a fingerprint from the bytes at both ends of a file.
    ///
    /// - Parameters:
    ///   - size: The file size in bytes.
    ///   - head: The first `min(size, chunkSize)` bytes.
    ///   - tail: The last `min(size, chunkSize)` bytes (may overlap `head`).
    public init(size: Int64, head: some Sequence<UInt8>, tail: some Sequence<UInt8>) {
        var hasher = SHA256()
        hasher.update(data: Array(head))
        hasher.update(data: Array(tail))
        self.size = size
        self.durationMicroseconds = nil
        self.digest = hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// `v2:<size>:<sha256 hex>`.
    public var description: String {
        "v2:\(size):\(digest)"
    }

    /// Parses either string form (`v2:<size>:<hex>` or `v1:<size>:<duration µs or ->:<hex>`);
    /// `nil` if it is neither.
    ///
    /// - Parameter description: Text produced by ``description`` (or by an earlier coplay).
    public init?(_ description: String) {
        let parts = description.split(separator: ":", omittingEmptySubsequences: false)
        let duration: Int64?
        switch (parts.first, parts.count) {
        case ("v2", 3):
            duration = nil
        case ("v1", 4):
            if parts[2] == "-" { duration = nil } else if let d = Int64(parts[2]) { duration = d } else { return nil }
        default:
            return nil
        }
        guard let size = Int64(parts[1]), size >= 0 else { return nil }
        let digest = String(parts[parts.count - 1])
        guard digest.count == 64, digest.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        self.size = size
        self.durationMicroseconds = duration
        self.digest = digest
    }

    /// Same size and digest: the same media, whichever form each was written in.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.size == rhs.size && lhs.digest == rhs.digest
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(size)
        hasher.combine(digest)
    }

    public init(from decoder: any Decoder) throws {
        let string = try decoder.singleValueContainer().decode(String.self)
        guard let value = ContentFingerprint(string) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a fingerprint: \(string)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
