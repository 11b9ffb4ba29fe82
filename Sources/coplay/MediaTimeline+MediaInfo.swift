import MediaProbe
import PlaybackCoordinator

extension MediaTimeline {
    /// The playback timeline of a probed file: its primary video stream's frames (a grid when the
    /// frame rate is constant, exact times otherwise), identified by the file's content fingerprint,
    /// so every member with the same bytes has the same item identifier.
    ///
    /// - Parameter info: a probe made with `scanPackets: true` (frame timelines).
    /// - Throws: ``PlaybackSetupError/noVideoFrames(_:)`` for a file without video frames.
    init(info: MediaInfo) throws(PlaybackSetupError) {
        guard let video = info.primaryVideoStream, let frames = video.timeline, frames.count > 0 else {
            throw .noVideoFrames(info.path)
        }
        let identifier = "\(info.fingerprint)"
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
