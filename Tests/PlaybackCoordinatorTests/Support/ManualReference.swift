import ClockSync

@testable import PlaybackCoordinator

/// A reference-time source that reads ClockSync's ``ManualClock`` (reference time = the clock's offset).
struct ManualReference: ReferenceTimeSource {
    let clock: ManualClock

    func now() -> ReferenceTime? { ReferenceTime(nanoseconds: clock.now.offset.nanosecondsValue) }
    func referenceTime(atLocal local: Duration) -> ReferenceTime? { ReferenceTime(nanoseconds: local.nanosecondsValue) }
    func localTime(atReference reference: ReferenceTime) -> Duration? { .nanoseconds(reference.nanoseconds) }
    var errorBound: Duration? { .zero }
}
