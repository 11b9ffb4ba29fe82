/// One stream of a media file, as libavformat reports it after `avformat_find_stream_info`.
///
/// Field meanings follow ffprobe's `-show_streams` (noted on each property), so values can be
/// checked against `ffprobe` one to one.
///
/// ```swift
/// for stream in info.streams where stream.kind == .video {
///     print(stream.codecName ?? "?", stream.realFrameRate, stream.width ?? 0, stream.height ?? 0)
/// }
/// ```
public struct MediaStream: Sendable, Hashable, Codable {
    /// What a stream carries (ffprobe's `codec_type`).
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case video, audio, subtitle, data, attachment, unknown
    }

    /// The stream's index in the container (`index`).
    public var index: Int
    /// Video, audio, ... (`codec_type`).
    public var kind: Kind
    /// Short codec name such as `h264` (`codec_name`); `nil` when libavcodec does not know it.
    public var codecName: String?
    /// Descriptive codec name (`codec_long_name`).
    public var codecLongName: String?
    /// The unit of this stream's timestamps (`time_base`).
    public var timeBase: Rational
    /// The lowest frame rate all timestamps fit (`r_frame_rate`); `0/0` when unknown.
    public var realFrameRate: Rational
    /// The average frame rate (`avg_frame_rate`); `0/0` when unknown.
    public var averageFrameRate: Rational
    /// The frame count the container header declares (`nb_frames`), if any.
    public var headerFrameCount: Int?
    /// The number of packets read by a packet scan (ffprobe `-count_packets` `nb_read_packets`);
    /// `nil` unless the probe ran with ``MediaProbe/Options/scanPackets``. Packets the container
    /// hides (edit lists) are included, as ffprobe counts them.
    public var packetCount: Int?
    /// The stream's first timestamp (`start_pts`, `start_time`), if known.
    public var startTime: MediaTime?
    /// The stream's duration (`duration_ts`, `duration`), if known.
    public var duration: MediaTime?
    /// Bits per second (`bit_rate`), if known.
    public var bitRate: Int?
    /// Frame width in pixels (`width`), video only.
    public var width: Int?
    /// Frame height in pixels (`height`), video only.
    public var height: Int?
    /// Samples per second (`sample_rate`), audio only.
    public var sampleRate: Int?
    /// Channel count (`channels`), audio only.
    public var channels: Int?
    /// The `language` tag (ISO 639-2, e.g. `eng`; `und` for undetermined), if present.
    public var language: String?
    /// Whether this "video" stream is a still picture (cover art), not moving video.
    public var isAttachedPicture: Bool
    /// Every frame's presentation time; video streams only, and only after a packet scan.
    public var timeline: VideoFrameTimeline?

    /// Creates a stream description (normally made by ``MediaProbe``).
    ///
    /// - Parameters:
    ///   - index: The container index.
    ///   - kind: The stream kind.
    ///   - timeBase: The timestamp unit.
    public init(index: Int, kind: Kind, timeBase: Rational) {
        self.index = index
        self.kind = kind
        self.timeBase = timeBase
        self.realFrameRate = .unknown
        self.averageFrameRate = .unknown
        self.isAttachedPicture = false
    }

    /// The best frame count known: the packet count of a scan, else the header's count.
    public var frameCount: Int? { packetCount ?? headerFrameCount }

    /// Whether this is moving video or audio with a codec libavcodec knows.
    public var isUsable: Bool {
        codecName != nil && (kind == .audio || (kind == .video && !isAttachedPicture))
    }
}
