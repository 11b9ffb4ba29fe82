extension MediaInfo {
    /// A few human-readable lines: the container, then one line per stream.
    ///
    /// ```
    /// samples/cfr-25.mp4: mov,mp4,m4a,3gp,3g2,mj2, 3.000000 s from 0.000000 s, 157 kb/s, 59189 bytes
    ///   #0 video  h264   320x240     25/1 fps (avg 25/1)  tb 1/12800  75 frames
    ///   fingerprint v2:59189:5d1c...
    ///   stream identity v3:8a0f...   (when the probe computed it)
    /// ```
    public var summary: String {
        var header = "\(path): \(formatName)"
        header += ", " + (duration.map { "\($0.ffprobeString) s" } ?? "unknown duration")
        if let startTime { header += " from \(startTime.ffprobeString) s" }
        if let bitRate { header += ", \(bitRate / 1000) kb/s" }
        header += ", \(size) bytes"
        var lines = [header]
        for stream in streams {
            var line = "  #\(stream.index) " + pad(stream.kind.rawValue, 9) + pad(stream.codecName ?? "unknown", 8)
            switch stream.kind {
            case .video:
                line += pad("\(stream.width ?? 0)x\(stream.height ?? 0)", 11)
                line += pad("\(stream.realFrameRate) fps (avg \(stream.averageFrameRate))", 30)
                if stream.isAttachedPicture { line += "cover art  " }
            case .audio:
                line += pad("\(stream.sampleRate ?? 0) Hz", 11) + pad("\(stream.channels ?? 0) ch", 30)
            default:
                line += pad("", 41)
            }
            line += pad("tb \(stream.timeBase)", 14)
            if let timeline = stream.timeline {
                line += "\(timeline.count) frames"
                if let packets = stream.packetCount, packets != timeline.count { line += " (\(packets) packets)" }
                line += timeline.isConstantRate ? ", constant rate  " : ", variable rate  "
            } else if let packets = stream.packetCount {
                line += "\(packets) packets  "
            } else if let frames = stream.headerFrameCount {
                line += "\(frames) frames  "
            }
            if let language = stream.language { line += language }
            lines.append(line.trimmingTrailingSpaces())
        }
        lines.append("  fingerprint \(fingerprint)")
        if let streamIdentity { lines.append("  stream identity \(streamIdentity)") }
        for warning in warnings { lines.append("  warning: \(warning)") }
        return lines.joined(separator: "\n")
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
