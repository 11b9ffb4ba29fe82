/// What ``MediaProbe`` learns about a media file: the container, its streams, a fingerprint.
///
/// Field meanings follow ffprobe's `-show_format` (`format_name`, `duration`, `start_time`,
/// `bit_rate`, `size`, `probe_score`); ``MediaStream`` covers `-show_streams`.
///
/// ```swift
/// let info = try await MediaProbe.shared.probe(URL(fileURLWithPath: "samples/cfr-25.mp4"))
/// print(info.formatName, info.duration?.seconds ?? 0, info.streams.count)
/// ```
public struct MediaInfo: Sendable, Hashable, Codable {
    /// The path that was probed (ffprobe's `filename`).
    public var path: String
    /// libavformat's demuxer name(s), e.g. `mov,mp4,m4a,3gp,3g2,mj2` (`format_name`).
    public var formatName: String
    /// The demuxer's descriptive name (`format_long_name`).
    public var formatLongName: String?
    /// The container duration in microseconds (`duration`), if known.
    public var duration: MediaTime?
    /// The container start time in microseconds (`start_time`), if known.
    public var startTime: MediaTime?
    /// The overall bit rate in bits per second (`bit_rate`), if known.
    public var bitRate: Int?
    /// The file size in bytes (`size`).
    public var size: Int64
    /// How sure libavformat was of the format, 1...100 (`probe_score`).
    public var probeScore: Int
    /// The streams in container order.
    public var streams: [MediaStream]
    /// The content fingerprint (size, duration, head and tail hash).
    public var fingerprint: ContentFingerprint
    /// The primary video stream's identity from its packets (same for a remux, different for another
    /// encode), when the probe asked for it (``MediaProbe/Options/streamIdentity``) and there is a video stream.
    public var streamIdentity: StreamIdentity?
    /// Problems met while scanning packets (the scan stopped early); empty when all went well.
    public var warnings: [String]

    /// Creates a description (normally made by ``MediaProbe``).
    ///
    /// - Parameters:
    ///   - path: The file path.
    ///   - formatName: The demuxer name.
    ///   - size: The file size.
    ///   - fingerprint: The content fingerprint.
    public init(path: String, formatName: String, size: Int64, fingerprint: ContentFingerprint) {
        self.path = path
        self.formatName = formatName
        self.size = size
        self.probeScore = 0
        self.streams = []
        self.fingerprint = fingerprint
        self.warnings = []
    }

    /// The first moving-video stream with a known codec, if any.
    public var primaryVideoStream: MediaStream? {
        streams.first { $0.kind == .video && $0.isUsable }
    }

    /// The first audio stream with a known codec, if any.
    public var primaryAudioStream: MediaStream? {
        streams.first { $0.kind == .audio && $0.isUsable }
    }
}
