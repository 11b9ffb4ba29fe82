import MediaProbe
import PlaybackCoordinator

extension MediaTimeline {
    /// The playback timeline of a probed file: its primary video stream's frames (a grid when the
    /// frame rate is constant, exact times otherwise), identified by its video stream's identity
    /// (`v3:…`, when the probe computed it; else the file's fingerprint), so every member with the
    /// same video packets, in whatever container, has the same item identifier.
    ///
    /// - Parameter info: a probe made with `scanPackets: true` (frame timelines).
    /// - Throws: ``PlaybackSetupError/noVideoFrames(_:)`` for a file without video frames.
    init(info: MediaInfo) throws(PlaybackSetupError) {
        guard let video = info.primaryVideoStream, let frames = video.timeline, frames.count > 0 else {
            throw .noVideoFrames(info.path)
        }
        // The video packets' identity when the probe computed it (a remux has it too), else the bytes'.
        let identifier = info.streamIdentity.map { "\($0)" } ?? "\(info.fingerprint)"
        let duration = max(frames.endTime, info.duration?.seconds ?? 0)
        if let grid = frames.grid {
            let tb = Double(grid.timeBase.numerator) / Double(grid.timeBase.denominator)
            self.init(
                identifier: identifier, duration: duration,
                frames: .grid(start: Double(grid.start) * tb, interval: Double(grid.frameDuration) * tb, count: grid.count))
        } else {
            self.init(identifier: identifier, duration: duration, frames: .exact(frames.frameTimes))
        }
    }
}
