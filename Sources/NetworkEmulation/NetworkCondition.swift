/// Named network conditions of the benchmark scenarios (issue 6), as impairment profiles for each
/// direction. "Upstream" is client to server.
///
/// | name | upstream | downstream |
/// |---|---|---|
/// | `quiet` | none | none |
/// | `jitter` | 20 ms ± 10 ms uniform | 20 ms ± 10 ms uniform |
/// | `asymmetric` | 65 ms | 35 ms (50 ms mean one way, 30 ms asymmetry) |
/// | `loss` | 1 % loss | 1 % loss |
///
/// ```swift
/// let condition = try NetworkCondition.named("jitter")
/// let configuration = ImpairmentConfiguration(targetPort: port, upstream: condition.upstream, downstream: condition.downstream)
/// ```
package struct NetworkCondition: Sendable, Hashable {
    /// The condition's name.
    package var name: String
    /// Client-to-server impairments.
    package var upstream: ImpairmentProfile
    /// Server-to-client impairments.
    package var downstream: ImpairmentProfile

    /// Creates a condition.
    package init(name: String, upstream: ImpairmentProfile, downstream: ImpairmentProfile) {
        self.name = name
        self.upstream = upstream
        self.downstream = downstream
    }

    /// Whether the condition impairs anything at all (`quiet` does not: no proxy is needed).
    package var isImpaired: Bool { upstream != .none || downstream != .none }

    /// Plain loopback.
    package static let quiet = NetworkCondition(name: "quiet", upstream: .none, downstream: .none)
    /// 20 ms ± 10 ms (uniform) each way.
    package static let jitter = NetworkCondition(
        name: "jitter", upstream: .init(delay: 0.020, jitter: 0.010), downstream: .init(delay: 0.020, jitter: 0.010))
    /// 50 ms mean one-way delay with 30 ms asymmetry: 65 ms up, 35 ms down.
    package static let asymmetric = NetworkCondition(
        name: "asymmetric", upstream: .init(delay: 0.065), downstream: .init(delay: 0.035))
    /// 1 % loss each way.
    package static let loss = NetworkCondition(name: "loss", upstream: .init(loss: 0.01), downstream: .init(loss: 0.01))

    /// Every named condition.
    package static let all: [NetworkCondition] = [.quiet, .jitter, .asymmetric, .loss]

    /// The condition called `name`.
    ///
    /// - Throws: ``NetworkEmulationError`` naming the known conditions.
    package static func named(_ name: String) throws -> NetworkCondition {
        guard let condition = all.first(where: { $0.name == name }) else {
            throw NetworkEmulationError.invalidProfile(
                "unknown network condition \(name) (known: \(all.map(\.name).joined(separator: ", ")))")
        }
        return condition
    }
}
