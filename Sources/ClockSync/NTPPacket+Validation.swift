extension NTPPacket {
    /// Checks that this packet is a request a server should answer (RFC 5905, RFC 4330 section 6).
    ///
    /// A request has mode 3 (client), version 1...4 and a non-zero transmit timestamp (which the
    /// server copies into the response's origin timestamp).
    ///
    /// - Throws: ``NTPPacketError`` naming the first problem found.
    public func validateRequest() throws(NTPPacketError) {
        guard mode == .client else { throw .unexpectedMode(mode) }
        guard (1...4).contains(version) else { throw .unsupportedVersion(version) }
        guard !transmitTimestamp.isZero else { throw .zeroTimestamp("transmit") }
    }

    /// Checks that this packet is a usable server response to the request whose transmit timestamp
    /// was `origin` (RFC 5905 section 8, RFC 4330 section 5).
    ///
    /// The checks, in order: mode 4 (server), version 1...4, the origin matches our request (so a
    /// spoofed or stale packet is dropped before anything else is believed), kiss-o'-death
    /// (stratum 0), stratum at most 15, leap indicator not "unsynchronized", and non-zero receive and
    /// transmit timestamps.
    ///
    /// - Parameter origin: The transmit timestamp of the request this should answer.
    /// - Throws: ``NTPPacketError``; a kiss-o'-death is ``NTPPacketError/kissOfDeath(_:)``.
    public func validateResponse(origin: NTPTimestamp) throws(NTPPacketError) {
        guard mode == .server else { throw .unexpectedMode(mode) }
        guard (1...4).contains(version) else { throw .unsupportedVersion(version) }
        guard originTimestamp == origin, !origin.isZero else { throw .originMismatch }
        if let code = kissCode { throw .kissOfDeath(code) }
        guard stratum <= 15 else { throw .invalidStratum(stratum) }
        guard leap != .unsynchronized else { throw .unsynchronized }
        guard !receiveTimestamp.isZero else { throw .zeroTimestamp("receive") }
        guard !transmitTimestamp.isZero else { throw .zeroTimestamp("transmit") }
    }
}
