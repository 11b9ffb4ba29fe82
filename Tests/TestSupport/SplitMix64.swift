/// SplitMix64: a small, fast, seeded generator, so random-input tests and simulations are
/// reproducible and a failing case can be replayed from its seed. Not cryptographic.
///
/// The one copy for every test target (`NetworkEmulation.SeededGenerator` is the same algorithm
/// inside the emulator, which the tests do not reach into).
///
/// ```swift
/// var rng = SplitMix64(seed: 7)
/// let x = Double.random(in: 0..<1, using: &rng)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64

    /// Creates a generator; equal seeds give equal sequences.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in [0, 1) from the top 53 bits of ``next()``.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}
