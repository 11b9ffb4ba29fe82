/// One piece of the group's effective timeline: from `start` on, the item is at `itemTime` and
/// advances at `rate` (0 while paused or while the group waits for a suspended participant).
public struct TimelineSegment: Hashable, Sendable {
    /// When the segment begins, on the reference clock.
    public var start: ReferenceTime
    /// Item time at `start`.
    public var itemTime: Double
    /// Rate from `start` on.
    public var rate: Double
    /// Whether the segment is a wait for a suspended participant.
    public var waiting: Bool
    /// When the wait ends at the latest (waiting segments only).
    public var waitEnd: ReferenceTime?
    /// Whether the segment is the item's end: the group reached the state's duration and holds the
    /// last frame there (rate 0), attributed to nobody.
    public var ended: Bool = false

    /// Whether both segments move the same way (ignoring when a wait ends at the latest).
    public func sameMotion(as other: TimelineSegment) -> Bool {
        start == other.start && itemTime == other.itemTime && rate == other.rate && waiting == other.waiting
            && ended == other.ended
    }

    /// Item time at `t` (at or after `start`).
    public func itemTime(at t: ReferenceTime) -> Double {
        itemTime + rate * (t - start).secondsValue
    }
}
