import Foundation
import PlaybackCoordinator

extension MemberMedia.Copy {
    /// The copy as an entry of the group's queue: its stream identity, its file name as the title,
    /// its duration and frame rate (`coplay host A B C` and `coplay control … queue add`).
    var queueItem: QueueItem {
        QueueItem(
            item: timeline.identifier, fingerprint: fingerprint == timeline.identifier ? nil : fingerprint,
            title: URL(fileURLWithPath: path).lastPathComponent, duration: timeline.duration,
            frameRate: timeline.duration > 0 ? Double(timeline.frameCount) / timeline.duration : nil)
    }
}
