import Crypto

/// A cheap identity for a media file, so participants can tell that they hold the same media.
///
/// It combines the file size, the duration libavformat reports and a SHA-256 of the first and last
/// ``chunkSize`` bytes (the whole file when it is smaller than two chunks). Reading two chunks
/// costs the same for a 50 kB clip and a 50 GB film. Two different files could in principle
/// collide only if they have the same size, duration, head and tail.
///
/// The string form, `v1:<size>:<duration µs or ->:<sha256 hex>`, is stable across machines and
/// versions of coplay; compare strings (or values) to compare media.
///
/// ```swift
/// let mine = info.fingerprint
/// if mine.description == theirs { print("same media") }
/// ```
public struct ContentFingerprint: Sendable, Hashable, Codable, LosslessStringConvertible {
    /// Bytes hashed at each end of the file.
    public static let chunkSize = 64 * 1024

    /// The file size in bytes.
    public let size: Int64
    /// The container duration in microseconds, when known.
    public let durationMicroseconds: Int64?
    /// Lower-case hex SHA-256 of the head chunk followed by the tail chunk.
    public let digest: String

    /// Computes a fingerprint from the bytes at both ends of a file.
    ///
    /// - Parameters:
    ///   - size: The file size in bytes.
    ///   - head: The first `min(size, chunkSize)` bytes.
    ///   - tail: The last `min(size, chunkSize)` bytes (may overlap `head`).
    ///   - durationMicroseconds: The container duration, if known.
    public init(size: Int64, head: some Sequence<UInt8>, tail: some Sequence<UInt8>, durationMicroseconds: Int64?) {
        var hasher = SHA256()
        hasher.update(data: Array(head))
        hasher.update(data: Array(tail))
        self.size = size
        self.durationMicroseconds = durationMicroseconds
        self.digest = hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// `v1:<size>:<duration µs or ->:<sha256 hex>`.
    public var description: String {
        "v1:\(size):\(durationMicroseconds.map(String.init) ?? "-"):\(digest)"
    }

    /// Parses the string form; `nil` if it is not one.
    ///
    /// - Parameter description: Text produced by ``description``.
    public init?(_ description: String) {
        let parts = description.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "v1", let size = Int64(parts[1]), size >= 0 else { return nil }
        let duration: Int64?
        if parts[2] == "-" { duration = nil } else if let d = Int64(parts[2]) { duration = d } else { return nil }
        let digest = String(parts[3])
        guard digest.count == 64, digest.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        self.size = size
        self.durationMicroseconds = duration
        self.digest = digest
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
