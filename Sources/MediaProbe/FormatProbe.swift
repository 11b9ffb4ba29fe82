internal import CFFmpeg
import Foundation

/// The blocking part of a probe: plain POSIX reads and libavformat calls, run on a pool thread.
///
/// Order of work: open the file ourselves (so a missing file or a permission problem is reported
/// from `errno`, not guessed from a libavformat code), read the head and tail chunks for the
/// fingerprint, then `avformat_open_input` + `avformat_find_stream_info` (what ffprobe does), and
/// optionally read every packet, or the packets a ``StreamIdentity`` needs. The format context is
/// always closed before returning.
enum FormatProbe {
    /// Turns libavutil's logging off once per process (it writes to standard error).
    private static let quietLogging: Void = {
        av_log_set_level(AV_LOG_QUIET)
    }()

    static func run(path: String, options: MediaProbe.Options, interrupt: ProbeInterrupt) throws(MediaProbeError) -> MediaInfo {
        _ = quietLogging
        let deadline = interrupt
        if deadline.shouldStop { throw deadline.error(path: path) }
        let file = try readEnds(path: path)

        var context = try open(path: path, head: file.head, deadline: deadline)
        defer { avformat_close_input(&context) }
        guard let ctx = context else { throw .readFailed(path: path, detail: "libavformat returned no context") }

        let found = avformat_find_stream_info(ctx, nil)
        if found < 0 {
            if deadline.shouldStop { throw deadline.error(path: path) }
            throw .corrupt(path: path, detail: "\(formatName(ctx)) (libavformat: \(errorString(found)))")
        }

        var streams = (0..<Int(coplay_nb_streams(ctx))).map { describe(coplay_stream(ctx, Int32($0))!, index: $0) }
        guard streams.contains(where: \.isUsable) else {
            let kinds = streams.map { "\($0.kind.rawValue) \($0.codecName ?? "unknown codec")" }
            throw .noUsableStreams(path: path, detail: kinds.isEmpty ? "it has no streams" : "it has: \(kinds.joined(separator: ", "))")
        }

        var warnings: [String] = []
        var sampler = options.streamIdentity ? identitySampler(streams) : nil
        if options.scanPackets {
            warnings = try scanPackets(ctx, streams: &streams, identity: &sampler, path: path, deadline: deadline)
        } else if sampler != nil {
            try sampleIdentity(ctx, sampler: &sampler!, path: path, deadline: deadline)
        }

        let duration = ctx.pointee.duration != coplay_av_nopts_value() ? MediaTime(microseconds: ctx.pointee.duration) : nil
        var info = MediaInfo(
            path: path,
            formatName: formatName(ctx),
            size: file.size,
            fingerprint: ContentFingerprint(size: file.size, head: file.head, tail: file.tail)
        )
        info.formatLongName = ctx.pointee.iformat?.pointee.long_name.map { String(cString: $0) }
        info.duration = duration
        info.startTime = ctx.pointee.start_time != coplay_av_nopts_value() ? MediaTime(microseconds: ctx.pointee.start_time) : nil
        info.bitRate = ctx.pointee.bit_rate > 0 ? Int(ctx.pointee.bit_rate) : nil
        info.probeScore = Int(ctx.pointee.probe_score)
        info.streams = streams
        info.warnings = warnings
        info.streamIdentity = sampler?.identity
        return info
    }

    // MARK: - File access

    struct FileEnds {
        var size: Int64
        var head: [UInt8]
        var tail: [UInt8]
    }

    /// Opens `path` read-only and reads up to one fingerprint chunk from each end.
    static func readEnds(path: String) throws(MediaProbeError) -> FileEnds {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)  // a FIFO must not block the open
        guard fd >= 0 else { throw mapOpenErrno(errno, path: path) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .readFailed(path: path, detail: String(cString: strerror(errno))) }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            let what = (status.st_mode & S_IFMT) == S_IFDIR ? "it is a directory" : "it is not a regular file"
            throw .notMedia(path: path, detail: what)
        }
        let size = Int64(status.st_size)
        guard size > 0 else { throw .notMedia(path: path, detail: "the file is empty") }
        let chunk = Int64(ContentFingerprint.chunkSize)
        let head = try readChunk(fd, offset: 0, count: Int(min(size, chunk)), path: path)
        let tail = try readChunk(fd, offset: max(0, size - chunk), count: Int(min(size, chunk)), path: path)
        return FileEnds(size: size, head: head, tail: tail)
    }

    static func mapOpenErrno(_ code: Int32, path: String) -> MediaProbeError {
        switch code {
        case ENOENT, ENOTDIR: .fileNotFound(path: path)
        case EACCES, EPERM: .permissionDenied(path: path)
        default: .readFailed(path: path, detail: String(cString: strerror(code)))
        }
    }

    private static func readChunk(_ fd: Int32, offset: Int64, count: Int, path: String) throws(MediaProbeError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                if code == EISDIR { throw .notMedia(path: path, detail: "it is a directory") }
                throw .readFailed(path: path, detail: String(cString: strerror(code)))
            }
            if n == 0 { break }  // the file shrank under us: hash what is there
            done += n
        }
        return Array(bytes[0..<done])
    }

    // MARK: - libavformat

    /// `avformat_open_input` with ffprobe's options; failures classified by errno or a format sniff.
    private static func open(path: String, head: [UInt8], deadline: ProbeInterrupt) throws(MediaProbeError) -> UnsafeMutablePointer<AVFormatContext>? {
        var context = avformat_alloc_context()
        guard context != nil else { throw .readFailed(path: path, detail: "out of memory") }
        context!.pointee.interrupt_callback = AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                return Unmanaged<ProbeInterrupt>.fromOpaque(opaque).takeUnretainedValue().shouldStop ? 1 : 0
            },
            opaque: Unmanaged.passUnretained(deadline).toOpaque()
        )
        var dictionary: OpaquePointer?
        av_dict_set(&dictionary, "scan_all_pmts", "1", 0)  // as ffprobe: find every program of an MPEG-TS
        let opened = withExtendedLifetime(deadline) { avformat_open_input(&context, path, nil, &dictionary) }
        av_dict_free(&dictionary)
        guard opened >= 0 else {
            // avformat_open_input has freed the context.
            if deadline.shouldStop { throw deadline.error(path: path) }
            switch -opened {
            case ENOENT: throw .fileNotFound(path: path)
            case EACCES, EPERM: throw .permissionDenied(path: path)
            default: break
            }
            if let name = sniffFormat(head) {
                throw .corrupt(path: path, detail: "\(name) (libavformat: \(errorString(opened)))")
            }
            throw .notMedia(path: path, detail: "libavformat: \(errorString(opened))")
        }
        return context
    }

    /// The name of the format libavformat recognises in `head` with some confidence, if any.
    static func sniffFormat(_ head: [UInt8]) -> String? {
        let padding = Int(coplay_avprobe_padding_size())
        var buffer = head + [UInt8](repeating: 0, count: padding)
        var score: Int32 = 0
        let format: UnsafePointer<AVInputFormat>? = buffer.withUnsafeMutableBufferPointer { bytes in
            "".withCString { emptyName in
                var data = AVProbeData(
                    filename: emptyName,
                    buf: bytes.baseAddress,
                    buf_size: Int32(head.count),
                    mime_type: nil
                )
                return av_probe_input_format3(&data, 1, &score)
            }
        }
        guard let format, score > AVPROBE_SCORE_RETRY else { return nil }
        return String(cString: format.pointee.name)
    }

    private static func formatName(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> String {
        ctx.pointee.iformat?.pointee.name.map { String(cString: $0) } ?? "unknown"
    }

    static func errorString(_ code: Int32) -> String {
        let size = Int(coplay_av_error_max_string_size())
        var buffer = [CChar](repeating: 0, count: size)
        av_strerror(code, &buffer, size)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func rational(_ value: AVRational) -> Rational {
        Rational(Int64(value.num), Int64(value.den))
    }

    private static func describe(_ st: UnsafeMutablePointer<AVStream>, index: Int) -> MediaStream {
        let par = st.pointee.codecpar!.pointee
        let kind: MediaStream.Kind = switch par.codec_type {
        case AVMEDIA_TYPE_VIDEO: .video
        case AVMEDIA_TYPE_AUDIO: .audio
        case AVMEDIA_TYPE_SUBTITLE: .subtitle
        case AVMEDIA_TYPE_DATA: .data
        case AVMEDIA_TYPE_ATTACHMENT: .attachment
        default: .unknown
        }
        var stream = MediaStream(index: index, kind: kind, timeBase: rational(st.pointee.time_base))
        if let descriptor = avcodec_descriptor_get(par.codec_id) {
            stream.codecName = String(cString: descriptor.pointee.name)
            stream.codecLongName = descriptor.pointee.long_name.map { String(cString: $0) }
        }
        stream.realFrameRate = rational(st.pointee.r_frame_rate)
        stream.averageFrameRate = rational(st.pointee.avg_frame_rate)
        stream.headerFrameCount = st.pointee.nb_frames > 0 ? Int(st.pointee.nb_frames) : nil
        let nopts = coplay_av_nopts_value()
        if st.pointee.start_time != nopts { stream.startTime = MediaTime(value: st.pointee.start_time, timeBase: stream.timeBase) }
        if st.pointee.duration != nopts { stream.duration = MediaTime(value: st.pointee.duration, timeBase: stream.timeBase) }
        stream.bitRate = par.bit_rate > 0 ? Int(par.bit_rate) : nil
        switch kind {
        case .video:
            stream.width = Int(par.width)
            stream.height = Int(par.height)
        case .audio:
            stream.sampleRate = Int(par.sample_rate)
            stream.channels = Int(coplay_codecpar_channels(st.pointee.codecpar))
        default:
            break
        }
        if let entry = av_dict_get(st.pointee.metadata, "language", nil, 0), let value = entry.pointee.value {
            stream.language = String(cString: value)
        }
        stream.isAttachedPicture = (st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC) != 0
        return stream
    }

    /// Reads every packet: counts per stream, presentation timestamps of video frames.
    private static func scanPackets(
        _ ctx: UnsafeMutablePointer<AVFormatContext>,
        streams: inout [MediaStream],
        identity: inout StreamIdentitySampler?,
        path: String,
        deadline: ProbeInterrupt
    ) throws(MediaProbeError) -> [String] {
        guard let packet = av_packet_alloc() else { throw .readFailed(path: path, detail: "out of memory") }
        var packetPointer: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetPointer) }

        let nopts = coplay_av_nopts_value()
        var counts = [Int](repeating: 0, count: streams.count)
        var stamps = [[Int64]](repeating: [], count: streams.count)
        var ends = [Int64?](repeating: nil, count: streams.count)
        let wantsTimeline = streams.map { $0.kind == .video && !$0.isAttachedPicture && $0.timeBase.denominator != 0 }
        var warnings: [String] = []
        var retries = 0

        while true {
            let result = av_read_frame(ctx, packet)
            if result == coplay_averror_eof() { break }
            if result == coplay_averror(EAGAIN), retries < 1000 {
                retries += 1
                usleep(1000)
                continue
            }
            if result < 0 {
                if deadline.shouldStop { throw deadline.error(path: path) }
                warnings.append("packet scan stopped early: \(errorString(result))")
                break
            }
            defer { av_packet_unref(packet) }
            identity?.add(packet)
            let index = Int(packet.pointee.stream_index)
            guard counts.indices.contains(index) else { continue }  // a stream added during the scan
            counts[index] += 1
            guard wantsTimeline[index], (packet.pointee.flags & AV_PKT_FLAG_DISCARD) == 0 else { continue }
            let pts = packet.pointee.pts != nopts ? packet.pointee.pts : packet.pointee.dts
            guard pts != nopts else { continue }
            stamps[index].append(pts)
            if packet.pointee.duration > 0 {
                let (end, overflow) = pts.addingReportingOverflow(packet.pointee.duration)
                if !overflow { ends[index] = max(ends[index] ?? end, end) }
            }
        }

        for i in streams.indices {
            streams[i].packetCount = counts[i]
            if wantsTimeline[i] {
                streams[i].timeline = VideoFrameTimeline(timeBase: streams[i].timeBase, timestamps: stamps[i], endTimestamp: ends[i])
            }
        }
        return warnings
    }
}
