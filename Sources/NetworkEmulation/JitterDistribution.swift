/// How a link's per-packet delay varies around its base delay.
package enum JitterDistribution: String, Sendable, Hashable, Codable, CaseIterable {
    /// Uniform on [delay - jitter, delay + jitter].
    case uniform
    /// Normal with mean `delay` and standard deviation `jitter`, truncated to ±3 standard deviations.
    case normal
    /// Exponential-tailed: `delay - jitter` plus an exponential with mean `jitter`, truncated at
    /// `delay + 5 × jitter` (a long tail of late packets, as on busy Wi-Fi).
    case exponential

    /// How far below the base delay a sample can fall, in units of `jitter`.
    var lowerSpread: Double {
        switch self {
        case .uniform: 1
        case .normal: 3
        case .exponential: 1
        }
    }

    /// Draws one jitter offset (seconds) for a jitter amount `jitter` (seconds).
    func sample(jitter: Double, using rng: inout SeededGenerator) -> Double {
        guard jitter > 0 else { return 0 }
        switch self {
        case .uniform:
            return (rng.unit() * 2 - 1) * jitter
        case .normal:
            // Box-Muller; 1 - unit() lies in (0, 1], so the logarithm is finite.
            let u1 = 1 - rng.unit()
            let u2 = rng.unit()
            let z = (-2 * _log(u1)).squareRoot() * _cos(2 * Double.pi * u2)
            return min(max(z, -3), 3) * jitter
        case .exponential:
            let u = 1 - rng.unit()
            return min(-_log(u), 6) * jitter - jitter
        }
    }
}

#if canImport(Glibc)
import Glibc
private func _log(_ x: Double) -> Double { Glibc.log(x) }
private func _cos(_ x: Double) -> Double { Glibc.cos(x) }
#elseif canImport(Musl)
import Musl
private func _log(_ x: Double) -> Double { Musl.log(x) }
private func _cos(_ x: Double) -> Double { Musl.cos(x) }
#else
import Darwin
private func _log(_ x: Double) -> Double { Darwin.log(x) }
private func _cos(_ x: Double) -> Double { Darwin.cos(x) }
#endif
