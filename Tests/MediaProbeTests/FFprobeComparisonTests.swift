import Foundation
import MediaProbe
import Testing

/// MediaProbe against `ffprobe -count_packets -show_format -show_streams` on every sample.
///
/// Everything is compared exactly: both read the same libavformat fields after the same calls
/// (`avformat_open_input` with `scan_all_pmts`, `avformat_find_stream_info`, then every packet),
/// and MediaProbe prints times with ffprobe's arithmetic (`ts * av_q2d(tb)`, `"%f"`). No
/// one-tick tolerance turned out to be needed.
@Suite("MediaProbe agrees with ffprobe")
struct FFprobeComparisonTests {
    @Test("format and stream fields equal ffprobe's", arguments: Samples.names)
    func matchesFFprobe(name: String) async throws {
        let file = Samples.url(name)
        let reference = try await Samples.ffprobe(["-count_packets", "-show_format", "-show_streams"], file: file)
        let info = try await MediaProbe.shared.probe(file, options: .init(scanPackets: true))

        let format = try #require(reference["format"] as? [String: Any])
        #expect(info.formatName == format["format_name"] as? String)
        #expect(info.duration?.ffprobeString == format["duration"] as? String, "duration of \(name)")
        #expect(info.startTime?.ffprobeString == format["start_time"] as? String, "start time of \(name)")
        #expect(info.bitRate.map(String.init) == format["bit_rate"] as? String)
        #expect(String(info.size) == format["size"] as? String)
        #expect(info.probeScore == format["probe_score"] as? Int)

        let streams = try #require(reference["streams"] as? [[String: Any]])
        try #require(info.streams.count == streams.count)
        for (mine, theirs) in zip(info.streams, streams) {
            let label = "\(name) stream \(mine.index)"
            #expect(mine.index == theirs["index"] as? Int, "\(label)")
            #expect(mine.kind.rawValue == theirs["codec_type"] as? String, "\(label)")
            #expect(mine.codecName == theirs["codec_name"] as? String, "\(label)")
            #expect(mine.timeBase.description == theirs["time_base"] as? String, "\(label)")
            #expect(mine.realFrameRate.description == theirs["r_frame_rate"] as? String, "\(label)")
            #expect(mine.averageFrameRate.description == theirs["avg_frame_rate"] as? String, "\(label)")
            #expect(mine.headerFrameCount.map(String.init) == theirs["nb_frames"] as? String, "\(label)")
            #expect(mine.packetCount.map(String.init) == theirs["nb_read_packets"] as? String, "\(label) packets")
            #expect(mine.startTime?.value == (theirs["start_pts"] as? NSNumber)?.int64Value, "\(label)")
            #expect(mine.startTime?.ffprobeString == theirs["start_time"] as? String, "\(label)")
            #expect(mine.duration?.value == (theirs["duration_ts"] as? NSNumber)?.int64Value, "\(label)")
            #expect(mine.width == theirs["width"] as? Int, "\(label)")
            #expect(mine.height == theirs["height"] as? Int, "\(label)")
            #expect(mine.sampleRate.map(String.init) == theirs["sample_rate"] as? String, "\(label)")
            #expect(mine.channels == theirs["channels"] as? Int, "\(label)")
            let tags = theirs["tags"] as? [String: String]
            #expect(mine.language == tags?["language"], "\(label)")
        }
    }

    @Test("the video timeline holds exactly ffprobe's non-discarded packet timestamps", arguments: Samples.names)
    func timelineMatchesPackets(name: String) async throws {
        let file = Samples.url(name)
        let info = try await MediaProbe.shared.probe(file, options: .init(scanPackets: true))
        let reference = try await Samples.ffprobe(["-show_entries", "packet=stream_index,pts,dts,flags"], file: file)
        let packets = try #require(reference["packets"] as? [[String: Any]])
        for stream in info.streams {
            guard stream.kind == .video else {
                #expect(stream.timeline == nil)
                continue
            }
            let timeline = try #require(stream.timeline)
            let expected = packets
                .filter { ($0["stream_index"] as? Int) == stream.index }
                .filter { !(($0["flags"] as? String) ?? "").contains("D") }  // hidden by an edit list
                .compactMap { (($0["pts"] ?? $0["dts"]) as? NSNumber)?.int64Value }
            #expect(timeline.timestamps == Array(Set(expected)).sorted(), "\(name)")
            #expect(timeline.frameTimes.count == timeline.count)
            #expect(zip(timeline.frameTimes, timeline.frameTimes.dropFirst()).allSatisfy { $0 < $1 }, "presentation order")
        }
    }

    @Test("the samples cover the rates, containers and cases issue 3 asks for")
    func coverage() async throws {
        var rates: Set<Rational> = []
        var formats: Set<String> = []
        var audioCodecs: Set<String> = []
        var hasVFR = false, hasStartOffset = false, hasEditList = false
        for name in Samples.names {
            let info = try await MediaProbe.shared.probe(Samples.url(name), options: .init(scanPackets: true))
            formats.insert(info.formatName)
            if let start = info.startTime, start.seconds >= 1 { hasStartOffset = true }
            if let video = info.primaryVideoStream, let timeline = video.timeline {
                rates.insert(video.realFrameRate.reduced)
                // Variable rate: frame intervals differ by more than the rounding of a millisecond time base.
                let gaps = zip(timeline.timestamps, timeline.timestamps.dropFirst()).map { $1 - $0 }
                if let low = gaps.min(), let high = gaps.max(), high - low > 2 { hasVFR = true }
                if let packets = video.packetCount, packets > timeline.count { hasEditList = true }
            } else if let audio = info.primaryAudioStream, let codec = audio.codecName {
                audioCodecs.insert(codec)
            }
        }
        let wanted: [Rational] = [.init(24000, 1001), .init(24, 1), .init(25, 1), .init(30000, 1001), .init(30, 1), .init(50, 1), .init(60, 1)]
        for rate in wanted { #expect(rates.contains(rate), "a sample at \(rate) fps") }
        for format in ["mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "mpegts"] { #expect(formats.contains(format)) }
        for codec in ["mp3", "flac", "pcm_s16le", "opus"] { #expect(audioCodecs.contains(codec)) }
        #expect(hasVFR)
        #expect(hasStartOffset)
        #expect(hasEditList)
        // Every file in samples/ is in the list (so the comparison tests cover all of them).
        let present = try FileManager.default.contentsOfDirectory(atPath: Samples.directory.path).filter { !$0.hasPrefix(".") && $0 != "README.md" }
        #expect(Set(present) == Set(Samples.names))
    }
}
