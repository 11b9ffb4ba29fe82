import NIOSSL

/// Why a connection to the relay failed at the transport, in words that name the fix.
public struct RelayTransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Hashable, Sendable {
        /// A plain (`coplay://`) client met a relay that speaks TLS.
        case relaySpeaksTLS
        /// A TLS (`coplays://`) client met a relay that does not speak TLS.
        case relayIsPlain
        /// The relay's certificate failed verification against the trust store (or the CA given).
        case certificateRejected
        /// The relay's public key is not the one the invite pins.
        case pinMismatch
    }

    /// What went wrong.
    public let code: Code
    /// The relay, `HOST:PORT`.
    public let relay: String
    /// Details (the TLS library's reason, the keys compared).
    public let detail: String

    public var description: String {
        switch code {
        case .relaySpeaksTLS:
            "the relay at \(relay) speaks TLS but this invite is plain (coplay://): ask the host for a coplays:// invite"
        case .relayIsPlain:
            "the relay at \(relay) does not speak TLS but this invite is coplays://: the relay runs without --tls, or the invite is wrong (\(detail))"
        case .certificateRejected:
            "the relay at \(relay) presented a certificate that failed verification (\(detail)); give coplay the relay's CA with --ca FILE, or use an invite that pins the relay's key"
        case .pinMismatch:
            "the relay at \(relay) presented a key that is not the one this invite pins (\(detail)): someone else may be answering at that address"
        }
    }

    /// A frame length a plain client read from a TLS relay: a TLS record header (content type
    /// 20-23, then version 3.x) read as the 4-byte length of a frame.
    static func isTLSRecordHeader(_ length: UInt32) -> Bool {
        let type = length >> 24
        let major = (length >> 16) & 0xFF
        return (20...23).contains(type) && major == 3
    }

    /// The transport's error in plain words, when it is one of the mismatches above.
    static func classify(_ error: any Error, relay: String, usesTLS: Bool, pinFailure: String?) -> (any Error) {
        if !usesTLS, let decoding = error as? FrameDecodingError, let length = decoding.announcedLength,
            isTLSRecordHeader(length)
        {
            return RelayTransportError(code: .relaySpeaksTLS, relay: relay, detail: "")
        }
        guard usesTLS else { return error }
        if let pinFailure { return RelayTransportError(code: .pinMismatch, relay: relay, detail: pinFailure) }
        let text = "\(error)"
        if text.contains("WRONG_VERSION_NUMBER") || text.contains("PACKET_LENGTH_TOO_LONG") || text.contains("HTTP_REQUEST")
            || (error as? NIOSSLError) == .uncleanShutdown
        {
            return RelayTransportError(code: .relayIsPlain, relay: relay, detail: "\(error)")
        }
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate") {
            return RelayTransportError(code: .certificateRejected, relay: relay, detail: "\(error)")
        }
        return error
    }
}
