internal import CFFmpeg
import Foundation

/// Collects what a ``StreamIdentity`` hashes from one video stream's packets: the first
/// ``StreamIdentity/sampledPackets`` and the last (a ring), and the presentation-time span.
struct StreamIdentitySampler {
    let streamIndex: Int
    let codec: String
    let timeBase: Rational
    private(set) var head: [[UInt8]] = []
    private var ring: [[UInt8]] = []
    private var ringStart = 0
    private var headLowest: Int64?
    private var tailTimes: [Int64?] = []
    /// Video packets seen so far (reset with the tail on a seek).
    private(set) var tailCount = 0

    init(streamIndex: Int, codec: String, timeBase: Rational) {
        self.streamIndex = streamIndex
        self.codec = codec
        self.timeBase = timeBase
    }

    var headIsFull: Bool { head.count >= StreamIdentity.sampledPackets }
    var tailIsFull: Bool { ring.count >= StreamIdentity.sampledPackets }

    /// Takes one packet (of any stream; others are ignored).
    mutating func add(_ packet: UnsafeMutablePointer<AVPacket>) {
        guard Int(packet.pointee.stream_index) == streamIndex else { return }
        let bytes: [UInt8] = packet.pointee.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(packet.pointee.size))) } ?? []
        let nopts = coplay_av_nopts_value()
        let pts: Int64? = packet.pointee.pts != nopts ? packet.pointee.pts : (packet.pointee.dts != nopts ? packet.pointee.dts : nil)
        if !headIsFull {
            head.append(bytes)
            if let pts { headLowest = min(headLowest ?? pts, pts) }
        }
        let limit = StreamIdentity.sampledPackets
        if ring.count < limit {
            ring.append(bytes)
            tailTimes.append(pts)
        } else {
            ring[ringStart] = bytes
            tailTimes[ringStart] = pts
            ringStart = (ringStart + 1) % limit
        }
        tailCount += 1
    }

    /// Forgets the tail (before reading again from a seek).
    mutating func resetTail() {
        ring = []
        tailTimes = []
        ringStart = 0
        tailCount = 0
    }

    var identity: StreamIdentity {
        let tail = Array(ring[ringStart...] + ring[..<ringStart])
        let highest = tailTimes.compactMap { $0 }.max()
        var length = 0.0
        if let low = headLowest, let high = highest, high > low {
            let (span, overflow) = high.subtractingReportingOverflow(low)
            if !overflow { length = MediaTime(value: span, timeBase: timeBase).seconds }
        }
        return StreamIdentity(codec: codec, length: length, head: head, tail: tail)
    }
}

extension FormatProbe {
    /// The stream a ``StreamIdentity`` is taken from: the first moving-video stream with a known codec.
    static func identitySampler(_ streams: [MediaStream]) -> StreamIdentitySampler? {
        guard let video = streams.first(where: { $0.kind == .video && $0.isUsable && $0.timeBase.denominator != 0 }),
            let codec = video.codecName
        else { return nil }
        return StreamIdentitySampler(streamIndex: video.index, codec: codec, timeBase: video.timeBase)
    }

    /// Reads the first video packets, then seeks near the end and reads to the end of the file for the
    /// last ones (a window that doubles until it holds enough; without a usable seek, reads on).
    static func sampleIdentity(
        _ ctx: UnsafeMutablePointer<AVFormatContext>,
        sampler: inout StreamIdentitySampler,
        path: String,
        deadline: ProbeInterrupt
    ) throws(MediaProbeError) {
        guard let packet = av_packet_alloc() else { throw .readFailed(path: path, detail: "out of memory") }
        var packetPointer: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetPointer) }

        /// Reads until the head is full (`untilHead`) or the end of the file; true at the end.
        func read(untilHead: Bool) throws(MediaProbeError) -> Bool {
            var retries = 0
            while !(untilHead && sampler.headIsFull) {
                let result = av_read_frame(ctx, packet)
                if result == coplay_averror_eof() { return true }
                if result == coplay_averror(EAGAIN), retries < 1000 {
                    retries += 1
                    usleep(1000)
                    continue
                }
                if result < 0 {
                    if deadline.shouldStop { throw deadline.error(path: path) }
                    return true  // a damaged end: identify from what could be read
                }
                sampler.add(packet)
                av_packet_unref(packet)
            }
            return false
        }

        if try read(untilHead: true) { return }
        let nopts = coplay_av_nopts_value()
        let duration = ctx.pointee.duration
        guard duration != nopts, duration > 0 else {
            _ = try read(untilHead: false)
            return
        }
        let start = ctx.pointee.start_time != nopts ? ctx.pointee.start_time : 0
        var window: Int64 = 30 * Int64(coplay_av_time_base())
        while true {
            let target = window >= duration ? Int64.min : start &+ duration &- window
            // Seeking by the format context's clock (stream -1), to the last keyframe before the target.
            let sought = target == Int64.min
                ? av_seek_frame(ctx, -1, start, AVSEEK_FLAG_BACKWARD) : av_seek_frame(ctx, -1, target, AVSEEK_FLAG_BACKWARD)
            if sought < 0 {
                // No seek here (a stream, a damaged index): read on from the head to the end.
                _ = try read(untilHead: false)
                return
            }
            sampler.resetTail()
            _ = try read(untilHead: false)
            if sampler.tailIsFull || target == Int64.min { return }
            window = window.multipliedReportingOverflow(by: 4).overflow ? Int64.max : window * 4
        }
    }
}
