import TestSupport

/// The simulations' draws on the shared seeded generator.
extension SplitMix64 {
    /// Uniform in `-magnitude...magnitude`.
    mutating func symmetric(_ magnitude: Double) -> Double {
        magnitude == 0 ? 0 : Double.random(in: -magnitude...magnitude, using: &self)
    }

    mutating func chance(_ probability: Double) -> Bool {
        probability > 0 && Double.random(in: 0..<1, using: &self) < probability
    }
}
