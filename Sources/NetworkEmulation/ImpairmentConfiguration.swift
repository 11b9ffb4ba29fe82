import NIOCore

/// What an ``ImpairmentProxy`` listens on, where it forwards to, and how it impairs each direction.
///
/// "Upstream" is client to target (the direction of the first packet), "downstream" target to client.
/// Asymmetric delay is simply different upstream and downstream profiles.
///
/// ```swift
/// // 50 ms one way with 30 ms asymmetry: 65 ms up, 35 ms down.
/// let configuration = ImpairmentConfiguration(
///     listenPort: 7000, targetPort: 7001,
///     upstream: .init(delay: 0.065), downstream: .init(delay: 0.035))
/// ```
package struct ImpairmentConfiguration: Sendable, Hashable {
    /// Which transports the proxy forwards.
    package struct Transports: OptionSet, Sendable, Hashable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        /// UDP datagrams.
        package static let udp = Transports(rawValue: 1)
        /// TCP byte streams.
        package static let tcp = Transports(rawValue: 2)
        /// Both, on the same port number (the relay serves NTP on UDP and its protocol on TCP there).
        package static let both: Transports = [.udp, .tcp]
    }

    /// Host to listen on.
    package var listenHost: String
    /// Port to listen on; 0 picks a free one (UDP and TCP then share the TCP port's number when both).
    package var listenPort: Int
    /// Host to forward to.
    package var targetHost: String
    /// Port to forward to.
    package var targetPort: Int
    /// The transports forwarded.
    package var transports: Transports
    /// Client-to-target impairments.
    package var upstream: ImpairmentProfile
    /// Target-to-client impairments.
    package var downstream: ImpairmentProfile
    /// Random seed; every link direction derives its own from it.
    package var seed: UInt64
    /// TCP bytes are forwarded in chunks of at most this size, each scheduled on its own.
    package var chunkSize: Int
    /// At most this many UDP clients at once; datagrams from further clients are dropped.
    package var maxUDPClients: Int

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - listenHost: default 127.0.0.1.
    ///   - listenPort: 0 for any free port.
    ///   - targetHost: default 127.0.0.1.
    ///   - targetPort: the port to forward to.
    ///   - transports: UDP, TCP or both (default both).
    ///   - upstream: client-to-target profile.
    ///   - downstream: target-to-client profile.
    ///   - seed: random seed.
    ///   - chunkSize: TCP chunk size in bytes (default 1448, a typical MSS).
    ///   - maxUDPClients: default 256.
    package init(
        listenHost: String = "127.0.0.1", listenPort: Int = 0, targetHost: String = "127.0.0.1", targetPort: Int,
        transports: Transports = .both, upstream: ImpairmentProfile = .none, downstream: ImpairmentProfile = .none,
        seed: UInt64 = 1, chunkSize: Int = 1448, maxUDPClients: Int = 256
    ) {
        self.listenHost = listenHost
        self.listenPort = listenPort
        self.targetHost = targetHost
        self.targetPort = targetPort
        self.transports = transports
        self.upstream = upstream
        self.downstream = downstream
        self.seed = seed
        self.chunkSize = chunkSize
        self.maxUDPClients = maxUDPClients
    }

    /// Checks every value.
    package func validate() throws {
        try upstream.validate()
        try downstream.validate()
        guard chunkSize > 0 else { throw NetworkEmulationError.invalidProfile("chunkSize must be > 0") }
        guard (0...65535).contains(listenPort), (1...65535).contains(targetPort) else {
            throw NetworkEmulationError.invalidProfile("ports must be within 1...65535")
        }
        guard !transports.isEmpty else { throw NetworkEmulationError.invalidProfile("no transport selected") }
    }

    /// The seed of one link direction (`stream` numbers TCP connections, 0 for UDP).
    func seed(upstream: Bool, stream: UInt64) -> UInt64 {
        var mixer = SeededGenerator(seed: seed ^ (stream &* 0x9E37_79B9_7F4A_7C15) ^ (upstream ? 0 : 0xD1B5_4A32_D192_ED03))
        return mixer.next()
    }
}
