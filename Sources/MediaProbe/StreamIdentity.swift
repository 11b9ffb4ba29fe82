import Crypto

/// An identity of a file's video stream, taken from its packets, not from the container's bytes.
///
/// Two files with the same video packets have the same identity whatever holds them: an MP4 and
/// its `ffmpeg -c copy` remux to Matroska agree, while another encode of the same source does not.
/// That is what "frame-identical" means for a group: the same coded frames, so every decoder shows
/// the same pictures.
///
/// The identity is a SHA-256 over, in this order: the codec's name; the video stream's length in
/// whole ten-second buckets (from the lowest presentation timestamp among the first packets to the
/// highest among the last, in seconds); and the size and bytes of the first ``sampledPackets``
/// video packets and of the last ``sampledPackets`` (decode order, as the demuxer returns them,
/// hidden edit-list frames included because a remux to a container without edit lists keeps
/// them). Reading only the two ends keeps it cheap: a header probe, the first packets, one seek
/// and the packets of the last seconds, the same for a 3 s clip and a 2 h film.
///
/// Exact timestamps are not hashed: containers round them differently (an MP4's 1/24000 s ticks
/// become a Matroska file's milliseconds), so a remux would never match. The ten-second length
/// bucket keeps two cuts of one film with identical openings and endings apart; a remux whose
/// length falls within a few milliseconds of a bucket edge may land in the next one and is then
/// taken for another encode of the same length (a near copy), never for other media.
///
/// Its string form is `v3:<sha256 hex>`; ``ContentFingerprint`` keeps the `v1`/`v2` forms (bytes of
/// the file's two ends), which a browser can compute and this cannot be computed without a demuxer.
///
/// ```swift
/// let info = try await MediaProbe.shared.probe(url, options: .init(streamIdentity: true))
/// if info.streamIdentity == StreamIdentity(theirs) { print("the same frames") }
/// ```
public struct StreamIdentity: Sendable, Hashable, Codable, LosslessStringConvertible {
    /// Video packets hashed at each end of the stream.
    public static let sampledPackets = 64
    /// The length bucket, in seconds.
    public static let lengthBucket = 10.0

    /// Lower-case hex SHA-256 (see the type's discussion).
    public let digest: String

    /// `v3:<sha256 hex>`.
    public var description: String { "v3:\(digest)" }

    /// Parses `v3:<64 lower-case hex digits>`; `nil` for anything else.
    ///
    /// - Parameter description: Text produced by ``description``.
    public init?(_ description: String) {
        guard description.hasPrefix("v3:") else { return nil }
        let digest = description.dropFirst(3)
        guard digest.count == 64, digest.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        self.digest = String(digest)
    }

    /// Computes an identity from the two ends of a video stream.
    ///
    /// - Parameters:
    ///   - codec: The codec's name (libavcodec's, e.g. `h264`).
    ///   - length: Seconds from the lowest presentation time among `head` to the highest among `tail`.
    ///   - head: The first packets' bytes, at most ``sampledPackets``, in decode order.
    ///   - tail: The last packets' bytes, at most ``sampledPackets``, in decode order (may overlap `head`).
    public init(codec: String, length: Double, head: [[UInt8]], tail: [[UInt8]]) {
        var hasher = SHA256()
        hasher.update(data: Array("coplay-stream-identity-3\u{0}\(codec)\u{0}".utf8))
        let bucket = length.isFinite && length > 0 ? UInt64(length / Self.lengthBucket) : 0
        withUnsafeBytes(of: bucket.littleEndian) { hasher.update(bufferPointer: $0) }
        for part in [head, tail] {
            withUnsafeBytes(of: UInt32(part.count).littleEndian) { hasher.update(bufferPointer: $0) }
            for packet in part {
                withUnsafeBytes(of: UInt32(truncatingIfNeeded: packet.count).littleEndian) { hasher.update(bufferPointer: $0) }
                hasher.update(data: packet)
            }
        }
        digest = hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    public init(from decoder: any Decoder) throws {
        let string = try decoder.singleValueContainer().decode(String.self)
        guard let value = StreamIdentity(string) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a stream identity: \(string)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
