import GroupSessions

/// The group activity coplay's players share: one media item, identified by its content.
///
/// The host publishes it when it creates the session; a joiner compares ``fingerprint`` with its own
/// copy of the media before joining, so a member never plays a different file in step with the
/// group. ``item`` is the ``MediaTimeline/identifier`` the coordinator's states carry.
///
/// ```swift
/// let activity = WatchTogetherActivity(item: timeline.identifier, fingerprint: "\(info.fingerprint)", title: "cfr-25.mp4")
/// let session = try await center.activate(activity, invite: invite)
/// ```
public struct WatchTogetherActivity: GroupActivity, Hashable {
    public static let activityIdentifier = "org.coplay.watch-together"

    /// The item identifier the group plays.
    public var item: String
    /// The content fingerprint of the host's media (MediaProbe's `ContentFingerprint` text form).
    public var fingerprint: String
    /// A human-readable title (the host's file name).
    public var title: String
    /// The item's duration in seconds, when known.
    public var duration: Double?
    /// Seconds between frames, for media on a constant frame grid: members that cannot probe the
    /// media themselves (browsers) snap pauses to the group's frame with it.
    public var frameInterval: Double?
    /// The first frame's presentation time in seconds (with ``frameInterval``).
    public var firstFrameTime: Double?

    /// Creates an activity.
    ///
    /// - Parameters:
    ///   - item: the item identifier.
    ///   - fingerprint: the media's content fingerprint.
    ///   - title: a title for people.
    ///   - timeline: the item's frames; a constant grid is published for members that cannot probe.
    public init(item: String, fingerprint: String, title: String, timeline: MediaTimeline? = nil) {
        self.item = item
        self.fingerprint = fingerprint
        self.title = title
        if let timeline {
            duration = timeline.duration
            if case .grid(let start, let interval, _) = timeline.frames {
                frameInterval = interval
                firstFrameTime = start
            }
        }
    }

    public var metadata: GroupActivityMetadata {
        GroupActivityMetadata(title: title, subtitle: fingerprint, type: .watchTogether)
    }
}
