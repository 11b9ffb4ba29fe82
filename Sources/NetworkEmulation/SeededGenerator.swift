/// A small, fast, seedable random number generator (SplitMix64), so an impairment schedule is
/// reproducible from its seed.
///
/// SplitMix64 passes BigCrush and needs eight bytes of state; it is not cryptographic.
///
/// ```swift
/// var rng = SeededGenerator(seed: 42)
/// let x = Double.random(in: 0..<1, using: &rng)
/// ```
package struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64

    /// Creates a generator; equal seeds give equal sequences.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in [0, 1).
    package mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}
