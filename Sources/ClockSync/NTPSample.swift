/// One client/server exchange reduced to offset and delay (RFC 5905 section 8).
///
/// With T1 = client transmit, T2 = server receive, T3 = server transmit, T4 = client receive:
/// offset θ = ((T2 - T1) + (T3 - T4)) / 2 and delay δ = (T4 - T1) - (T3 - T2), each difference taken
/// era-safely on the 64-bit timestamps. θ is "reference minus local": add it to local time to get the
/// server's time. The true offset lies within θ ± δ/2 whatever the path asymmetry.
///
/// ```swift
/// let sample = NTPSample(t1: t1, t2: response.receiveTimestamp, t3: response.transmitTimestamp, t4: t4)
/// print(sample.offset, sample.delay)
/// ```
public struct NTPSample: Sendable, Hashable {
    /// The smallest delay a sample reports: 1 µs, about the precision of the timestamps (2^-20 s).
    ///
    /// As RFC 5905 does (it clamps δ to the system precision), a smaller or negative delay, which
    /// timestamps read from two different clocks can produce on loopback, is raised to it, so no
    /// sample claims to pin the offset down more exactly than its timestamps can.
    public static let minimumDelay = 1e-6

    /// θ, in seconds: reference time minus local time.
    public var offset: Double
    /// δ, in seconds: the round-trip delay, never below ``minimumDelay``.
    public var delay: Double
    /// The local time of the middle of the exchange, the instant at which `offset` holds.
    public var localTime: NTPTimestamp

    /// Creates a sample from its parts.
    ///
    /// - Parameters:
    ///   - offset: Reference minus local time, in seconds.
    ///   - delay: The round-trip delay, in seconds (raised to ``minimumDelay`` if smaller).
    ///   - localTime: The local time at which the offset holds.
    public init(offset: Double, delay: Double, localTime: NTPTimestamp) {
        self.offset = offset
        self.delay = max(Self.minimumDelay, delay)
        self.localTime = localTime
    }

    /// Computes a sample from the four timestamps of an exchange.
    ///
    /// - Parameters:
    ///   - t1: Client transmit time, on the local timescale.
    ///   - t2: Server receive time, on the reference timescale.
    ///   - t3: Server transmit time, on the reference timescale.
    ///   - t4: Client receive time, on the local timescale.
    public init(t1: NTPTimestamp, t2: NTPTimestamp, t3: NTPTimestamp, t4: NTPTimestamp) {
        // Sum the raw 2^-32 s differences before converting, to keep the full precision.
        let forward = t2.rawDifference(from: t1)
        let backward = t3.rawDifference(from: t4)
        let offset = (Double(forward) + Double(backward)) / 2 / 4_294_967_296.0
        let roundTrip = Double(t4.rawDifference(from: t1)) / 4_294_967_296.0
        let serverTime = Double(t3.rawDifference(from: t2)) / 4_294_967_296.0
        self.init(
            offset: offset,
            delay: roundTrip - serverTime,
            localTime: t1.advanced(bySeconds: roundTrip / 2)
        )
    }
}
