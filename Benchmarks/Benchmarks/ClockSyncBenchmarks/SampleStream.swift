import ClockSync

/// Deterministic NTP samples as a client polling every 16 s over a LAN would see them: a 50 ppm
/// drift, 200 to 400 us delays, and every eighth sample delayed by a queue (a filter outlier).
struct SampleStream {
    private var index: UInt64 = 0
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The next sample.
    mutating func callAsFunction() -> NTPSample {
        index += 1
        // SplitMix64: a fixed sequence, the same on every run.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        let unit = Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        let seconds = Double(index) * 16
        let queued = index % 8 == 0 ? 0.005 : 0
        let delay = 0.000_2 + unit * 0.000_2 + queued
        let offset = 0.010 + seconds * 50e-6 + queued / 2
        return NTPSample(offset: offset, delay: delay, localTime: NTPTimestamp(unixSeconds: 1_800_000_000 + seconds))
    }
}
