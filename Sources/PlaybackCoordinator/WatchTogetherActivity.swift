import GroupSessions

/// The group activity coplay's players share: one media item, identified by its content.
///
/// The host publishes it when it creates the session; a joiner compares ``item`` (coplay's players:
/// the video stream's identity, `v3:…`, the same for a remux into another container) and
/// ``fingerprint`` (the file's bytes, `v2:…`, what a browser can check) with its own copies before
/// joining, so a member never plays different media in step with the group. Another encode whose
/// duration matches ``duration`` joins as a near copy unless ``exactCopies`` says the host refuses
/// those. ``item`` is the ``MediaTimeline/identifier`` the coordinator's states carry.
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
    /// The first frame's presentation time in seconds (for every timeline; a grid's start with
    /// ``frameInterval``).
    public var firstFrameTime: Double?
    /// `true` when the host accepts only copies with the item's own video packets (`coplay host
    /// --exact-copies`): a member with another encode of the same length is refused instead of
    /// joining as a near copy. Absent (`nil`) means near copies are welcome.
    public var exactCopies: Bool?

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
            switch timeline.frames {
            case .grid(let start, let interval, _):
                frameInterval = interval
                firstFrameTime = start
            case .exact(let times):
                firstFrameTime = times.first
            }
        }
    }

    public var metadata: GroupActivityMetadata {
        GroupActivityMetadata(title: title, subtitle: fingerprint, type: .watchTogether)
    }
}
