import ClockSync

extension ReferenceTime {
    /// The reference time of an NTP timestamp: nanoseconds since the Unix epoch on the NTP timescale.
    ///
    /// coplay's reference clock is the relay's NTP timescale (its monotonic clock anchored to UTC once
    /// at start-up), so expressing it as Unix nanoseconds keeps values readable in logs and events and
    /// exact to a nanosecond (an `Int64` holds Unix nanoseconds until 2262).
    ///
    /// ```swift
    /// let reference = ReferenceTime(ntp: syncedClock.now())
    /// ```
    ///
    /// - Parameter ntp: a timestamp in NTP era 0 (1900-2036), as ClockSync produces.
    public init(ntp: NTPTimestamp) {
        let seconds = Int64(ntp.seconds) - Int64(NTPTimestamp.unixEpochOffset)
        let nanoseconds = (Int64(ntp.fraction) * 1_000_000_000) >> 32
        self.init(nanoseconds: seconds * 1_000_000_000 + nanoseconds)
    }

    /// The NTP timestamp of this reference time (the inverse of ``init(ntp:)``, to within a nanosecond).
    public var ntpTimestamp: NTPTimestamp {
        let (seconds, remainder) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let (wholeSeconds, nanos) = remainder < 0 ? (seconds - 1, remainder + 1_000_000_000) : (seconds, remainder)
        // Round up so that converting back truncates to the same nanosecond.
        let fraction = UInt64(((Int64(nanos) << 32) + 999_999_999) / 1_000_000_000)
        let ntpSeconds = UInt64(truncatingIfNeeded: wholeSeconds + Int64(NTPTimestamp.unixEpochOffset))
        return NTPTimestamp(rawValue: (ntpSeconds << 32) &+ fraction)
    }
}
