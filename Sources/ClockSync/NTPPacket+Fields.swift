extension NTPPacket {
    /// The 2-bit leap indicator of RFC 5905 section 7.3.
    public enum LeapIndicator: UInt8, Sendable, Hashable, CaseIterable {
        /// No leap second pending.
        case noWarning = 0
        /// The last minute of the day has 61 seconds.
        case lastMinuteHas61Seconds = 1
        /// The last minute of the day has 59 seconds.
        case lastMinuteHas59Seconds = 2
        /// The sender's clock is not synchronized.
        case unsynchronized = 3
    }

    /// The 3-bit association mode of RFC 5905 section 7.3.
    public enum Mode: UInt8, Sendable, Hashable, CaseIterable {
        /// Reserved (0).
        case reserved = 0
        /// Symmetric active (1).
        case symmetricActive = 1
        /// Symmetric passive (2).
        case symmetricPassive = 2
        /// A client request (3).
        case client = 3
        /// A server response (4).
        case server = 4
        /// Broadcast (5).
        case broadcast = 5
        /// NTP control message (6).
        case control = 6
        /// Reserved for private use (7).
        case privateUse = 7
    }
}
