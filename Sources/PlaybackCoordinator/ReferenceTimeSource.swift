/// Where the coordinator reads the group's shared reference clock.
///
/// The coordinator never reads a system clock directly: it asks a reference-time source, which in
/// production is an adapter over ClockSync's `SyncedClock` (local monotonic time mapped onto the
/// relay's NTP timescale, slewed, with an error bound) and in tests a simulated clock.
///
/// Local monotonic time is expressed as a `Duration` since the source's own local epoch (for the
/// system adapter: `CLOCK_MONOTONIC`), so that both directions of the mapping are pure values.
///
/// ```swift
/// struct Adapter: ReferenceTimeSource {
///     let clock: SyncedClock
///     func now() -> ReferenceTime? { clock.isSynchronized ? ReferenceTime(nanoseconds: clock.nowNanoseconds) : nil }
///     // ...
/// }
/// ```
public protocol ReferenceTimeSource: Sendable {
    /// The reference time now, or `nil` while the source is not yet synchronized.
    func now() -> ReferenceTime?

    /// The reference time at a local monotonic instant, or `nil` while not synchronized.
    ///
    /// - Parameter local: time since the local monotonic epoch.
    func referenceTime(atLocal local: Duration) -> ReferenceTime?

    /// The local monotonic instant at which the reference clock reads `reference`, or `nil`
    /// while not synchronized.
    func localTime(atReference reference: ReferenceTime) -> Duration?

    /// A bound on the current error of ``now()`` against the true reference clock, or `nil`
    /// while not synchronized.
    var errorBound: Duration? { get }
}
