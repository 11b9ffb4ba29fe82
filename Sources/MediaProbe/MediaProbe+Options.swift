extension MediaProbe {
    /// What a probe reads beyond the container header.
    public struct Options: Sendable, Hashable {
        /// Read every packet: per-stream packet counts and video frame timelines. Costs a read of
        /// the whole file; off by default.
        public var scanPackets: Bool
        /// Compute the video stream's ``StreamIdentity`` (``MediaInfo/streamIdentity``): the first and
        /// last video packets, read during the packet scan or, without one, by reading the first
        /// packets and seeking near the end. Off by default.
        public var streamIdentity: Bool
        /// Give up (``MediaProbeError/Code/timedOut``) after this long; checked by libavformat's
        /// interrupt callback between reads.
        public var timeout: Duration

        /// Creates options.
        ///
        /// - Parameters:
        ///   - scanPackets: Read all packets for counts and timelines (default `false`).
        ///   - streamIdentity: Compute the video stream's identity (default `false`).
        ///   - timeout: The deadline for one probe (default 60 s).
        public init(scanPackets: Bool = false, streamIdentity: Bool = false, timeout: Duration = .seconds(60)) {
            self.scanPackets = scanPackets
            self.streamIdentity = streamIdentity
            self.timeout = timeout
        }
    }
}
