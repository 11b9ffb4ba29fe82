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
}
