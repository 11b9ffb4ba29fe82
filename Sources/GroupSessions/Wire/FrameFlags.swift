/// The 16-bit flags field of a frame header.
///
/// Unknown bits are carried unchanged and ignored, so later protocol revisions can add flags.
public struct FrameFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// On a data frame: the relay may drop it for a recipient that is falling behind.
    public static let unreliable = FrameFlags(rawValue: 1 << 0)
    /// On a data frame delivered at admission/join: it is a retained frame being replayed,
    /// not a live one.
    public static let replayed = FrameFlags(rawValue: 1 << 1)
    /// On a `hello`: the client reads ``FrameType/presence`` frames, so the relay may deliver
    /// several `joined` / `left` frames to it as one. A relay that does not know the flag ignores it.
    public static let presenceBatches = FrameFlags(rawValue: 1 << 2)
    /// On a retained data frame: its key may make room for another. A session holding
    /// ``HubLimits/maximumRetainedKeys`` keys drops the least recently stamped evictable frame
    /// for a new key instead of refusing the new one. For slots that only matter while they are
    /// recent (a member's suspension notice: every member that ever suspended has its own slot,
    /// and a session that runs for days sees many come and go). A relay that does not know the
    /// flag ignores it and refuses the new key as before. Not authenticated (only the relay reads it).
    public static let evictable = FrameFlags(rawValue: 1 << 3)
}
