extension MediaProbe {
    /// What a probe reads beyond the container header.
    public struct Options: Sendable, Hashable {
        /// Read every packet: per-stream packet counts and video frame timelines. Costs a read of
        /// the whole file; off by default.
        public var scanPackets: Bool
        /// Give up (``MediaProbeError/Code/timedOut``) after this long; checked by libavformat's
        /// interrupt callback between reads.
        public var timeout: Duration

        /// Creates options.
        ///
        /// - Parameters:
        ///   - scanPackets: Read all packets for counts and timelines (default `false`).
        ///   - timeout: The deadline for one probe (default 60 s).
        public init(scanPackets: Bool = false, timeout: Duration = .seconds(60)) {
            self.scanPackets = scanPackets
            self.timeout = timeout
        }
    }
}
