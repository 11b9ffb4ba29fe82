import ClockSync

/// A ``ReferenceTimeSource`` over ClockSync's `SyncedClock`: the group's reference clock as this
/// member's `TimeClient` estimates it.
///
/// The reference time is the relay's NTP timescale expressed as Unix nanoseconds (see
/// ``ReferenceTime/init(ntp:)``). It is `nil` until the first clock estimate arrives. Local time is a
/// `Duration` since the synced clock's local anchor instant (the moment its `LocalTimescale` was
/// made), read from the synced clock's own local clock `C`, so a `ManualClock` drives it in tests.
///
/// ```swift
/// let synced = SyncedClock(clock: ContinuousClock())
/// let client = TimeClient(transport: udp, syncedClock: synced)
/// let reference = SyncedReferenceTimeSource(synced)
/// let coordinator = PlaybackCoordinator(channel: channel, reference: reference, delegate: player, logger: logger)
/// ```
public struct SyncedReferenceTimeSource<C: Clock>: ReferenceTimeSource where C.Duration == Duration {
    /// The synced clock read by this source.
    public let syncedClock: SyncedClock<C>

    /// Creates a source over a synced clock.
    ///
    /// - Parameter syncedClock: the clock a `TimeClient` keeps in step with the relay.
    public init(_ syncedClock: SyncedClock<C>) {
        self.syncedClock = syncedClock
    }

    /// Creates a source over a time client's synced clock.
    ///
    /// - Parameter client: the running (or about to run) time client.
    public init(client: TimeClient<C>) {
        self.init(client.syncedClock)
    }

    public func now() -> ReferenceTime? {
        guard syncedClock.isSynchronized else { return nil }
        return ReferenceTime(ntp: syncedClock.now())
    }

    public func referenceTime(atLocal local: Duration) -> ReferenceTime? {
        guard syncedClock.isSynchronized else { return nil }
        let instant = syncedClock.timescale.anchorInstant.advanced(by: local)
        return ReferenceTime(ntp: syncedClock.referenceTime(atLocal: instant))
    }

    public func localTime(atReference reference: ReferenceTime) -> Duration? {
        guard syncedClock.isSynchronized else { return nil }
        let instant = syncedClock.localInstant(forReference: reference.ntpTimestamp)
        return syncedClock.timescale.anchorInstant.duration(to: instant)
    }

    public var errorBound: Duration? {
        guard syncedClock.isSynchronized else { return nil }
        let bound = syncedClock.errorBound
        guard bound.isFinite else { return nil }
        return .secondsRounded(bound)
    }
}
