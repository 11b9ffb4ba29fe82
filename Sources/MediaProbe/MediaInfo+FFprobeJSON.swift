import Foundation

extension MediaInfo {
    /// The probe result in ffprobe's JSON layout (`ffprobe -show_format -show_streams -of json`).
    ///
    /// Fields both tools have use ffprobe's names and types (strings where ffprobe prints strings:
    /// `duration`, `start_time`, `sample_rate`, `nb_frames`, `bit_rate`, `size`; numbers where it
    /// prints numbers: `width`, `height`, `channels`, `start_pts`, `duration_ts`); unknown values are
    /// left out, as ffprobe leaves them out. A packet scan adds `nb_read_packets` (as
    /// `ffprobe -count_packets`). coplay's additions have their own keys: `fingerprint` at the top
    /// level, `stream_identity` there when the probe computed it, and, with `frameTimes`, `frame_times` (seconds, presentation order) on video streams.
    ///
    /// ```swift
    /// let data = try info.ffprobeJSON(frameTimes: false)
    /// // {"streams":[{"index":0,"codec_name":"h264",...}],"format":{"duration":"3.000000",...},"fingerprint":"v2:..."}
    /// ```
    ///
    /// - Parameters:
    ///   - frameTimes: Include each video stream's `frame_times` (needs a packet scan).
    ///   - pretty: Indent the output.
    /// - Returns: UTF-8 JSON, one object.
    public func ffprobeJSON(frameTimes: Bool = false, pretty: Bool = false) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(FFprobeDocument(self, frameTimes: frameTimes))
    }
}
