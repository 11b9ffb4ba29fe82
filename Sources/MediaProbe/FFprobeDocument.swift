/// The Encodable shape of ffprobe's JSON.
struct FFprobeDocument: Encodable {
    struct Format: Encodable {
        var filename: String
        var nb_streams: Int
        var format_name: String
        var format_long_name: String?
        var start_time: String?
        var duration: String?
        var size: String
        var bit_rate: String?
        var probe_score: Int
    }

    struct Stream: Encodable {
        var index: Int
        var codec_name: String?
        var codec_long_name: String?
        var codec_type: String
        var width: Int?
        var height: Int?
        var sample_rate: String?
        var channels: Int?
        var r_frame_rate: String
        var avg_frame_rate: String
        var time_base: String
        var start_pts: Int64?
        var start_time: String?
        var duration_ts: Int64?
        var duration: String?
        var bit_rate: String?
        var nb_frames: String?
        var nb_read_packets: String?
        var tags: [String: String]?
        var frame_times: [Double]?
    }

    var streams: [Stream]
    var format: Format
    var fingerprint: String
    var stream_identity: String?

    init(_ info: MediaInfo, frameTimes: Bool) {
        streams = info.streams.map { s in
            Stream(
                index: s.index,
                codec_name: s.codecName,
                codec_long_name: s.codecLongName,
                codec_type: s.kind.rawValue,
                width: s.width,
                height: s.height,
                sample_rate: s.sampleRate.map(String.init),
                channels: s.channels,
                r_frame_rate: s.realFrameRate.description,
                avg_frame_rate: s.averageFrameRate.description,
                time_base: s.timeBase.description,
                start_pts: s.startTime?.value,
                start_time: s.startTime?.ffprobeString,
                duration_ts: s.duration?.value,
                duration: s.duration?.ffprobeString,
                bit_rate: s.bitRate.map(String.init),
                nb_frames: s.headerFrameCount.map(String.init),
                nb_read_packets: s.packetCount.map(String.init),
                tags: s.language.map { ["language": $0] },
                frame_times: frameTimes ? s.timeline?.frameTimes : nil
            )
        }
        format = Format(
            filename: info.path,
            nb_streams: info.streams.count,
            format_name: info.formatName,
            format_long_name: info.formatLongName,
            start_time: info.startTime?.ffprobeString,
            duration: info.duration?.ffprobeString,
            size: String(info.size),
            bit_rate: info.bitRate.map(String.init),
            probe_score: info.probeScore
        )
        fingerprint = info.fingerprint.description
        stream_identity = info.streamIdentity?.description
    }
}
