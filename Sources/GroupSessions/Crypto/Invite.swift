import Crypto
import Foundation

/// An invitation to a group session: `coplay[s]://HOST:PORT[,HOST:PORT…]/SESSION[?aead=SUITE][&pin=PIN][&host=KEY]#SECRET[.SEED]`.
///
/// Several comma-separated addresses name the nodes of one relay service (relays sharing a
/// PostgreSQL store, docs/scaling.md): members try them in turn, starting with the first
/// (``host``:``port``; the others are ``otherRelays``), and follow redirects to the node that
/// serves the session.
///
/// `coplays://` says the relay speaks TLS (``usesTLS``), `HOST:PORT` names the relay, `SESSION` is
/// the 32-hex-digit ``SessionID``, the optional `aead` query names the session's ``PayloadSuite``
/// (absent: ChaCha20-Poly1305), the optional `pin` is the SHA-256 of the relay certificate's
/// public key (``relayKeyPin``, base64url; a self-signed relay is then still authenticated), and
/// `SECRET` is 32 random bytes in unpadded base64url. The secret sits in the URL fragment, which URL
/// handling never sends to a server; coplay never sends it anywhere either: it only feeds
/// ``SessionKeys``. Whoever holds the invite can join and read the session.
///
/// A session where only hosts control (`coplay host --control hosts`) names its **host key** in
/// the `host` query (``hostKey``, an Ed25519 public key in base64url): members then count only
/// commands signed by the host key or by a key it granted control (docs/protocol.md, "Roles").
/// A **controller invite** also carries the host key's 32-byte seed after the secret, separated by
/// a dot (`#SECRET.SEED`, ``hostSeed``); a **viewer invite** (``viewer``) is the same invite
/// without it. The seed must be the named key's, or the invite is refused.
///
/// ```swift
/// let invite = Invite.generate(host: "127.0.0.1", port: 7000)
/// let text = invite.description            // coplay://127.0.0.1:7000/0f3c…#Qk9…
/// let parsed = try Invite(parsing: text)   // == invite
/// ```
public struct Invite: Hashable, Sendable, CustomStringConvertible {
    /// Bytes of the session secret.
    public static let secretLength = 32

    /// The relay's host name or address (IPv6 addresses without brackets).
    public var host: String
    /// The relay's TCP port.
    public var port: Int
    /// Further nodes of the same relay service, tried in turn after ``host``:``port``.
    public var otherRelays: [RelayAddress] = []
    /// The session.
    public var session: SessionID
    /// The session secret (never sent to the relay).
    public var secret: [UInt8]
    /// The algorithm that seals the session's payloads.
    public var suite: PayloadSuite
    /// Whether members reach the relay over TLS (`coplays://`).
    public var usesTLS: Bool
    /// The SHA-256 of the relay certificate's SubjectPublicKeyInfo: when set, members accept the
    /// relay's certificate by this key alone (a private or self-signed relay); when `nil`, by the
    /// system's trust store (or a CA the member is given).
    public var relayKeyPin: [UInt8]?
    /// The session's host key (an Ed25519 public key): set in a session where only hosts
    /// control, `nil` where everyone does.
    public var hostKey: [UInt8]?
    /// The host key's seed (an Ed25519 private key's 32 bytes): only in a controller invite of a
    /// session where only hosts control.
    public var hostSeed: [UInt8]?

    /// Creates an invite from its parts.
    public init(
        host: String, port: Int, session: SessionID, secret: [UInt8], suite: PayloadSuite = .default,
        usesTLS: Bool = false, relayKeyPin: [UInt8]? = nil
    ) {
        self.host = host
        self.port = port
        self.session = session
        self.secret = secret
        self.suite = suite
        self.usesTLS = usesTLS || relayKeyPin != nil
        self.relayKeyPin = relayKeyPin
    }

    /// A new session on the relay at `host:port` with a fresh random identifier and secret.
    ///
    /// - Parameters:
    ///   - host: the relay's host name or address.
    ///   - port: the relay's TCP port.
    ///   - suite: the session's AEAD; `.aes256GCM` lets browsers join.
    ///   - usesTLS: members connect with TLS (`coplays://`).
    ///   - relayKeyPin: the relay's public-key pin (implies TLS).
    public static func generate(
        host: String, port: Int, suite: PayloadSuite = .default, usesTLS: Bool = false, relayKeyPin: [UInt8]? = nil
    ) -> Invite {
        var rng = SystemRandomNumberGenerator()
        let secret = (0..<secretLength).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
        return Invite(
            host: host, port: port, session: .random(), secret: secret, suite: suite, usesTLS: usesTLS,
            relayKeyPin: relayKeyPin)
    }

    /// This invite for a session where only hosts control, with a fresh host key whose seed it
    /// carries (a controller invite).
    public func withNewHostKey() -> Invite {
        var invite = self
        let key = Curve25519.Signing.PrivateKey()
        invite.hostSeed = Array(key.rawRepresentation)
        invite.hostKey = Array(key.publicKey.rawRepresentation)
        return invite
    }

    /// Whether only hosts control the session (the invite names a host key).
    public var onlyHostsControl: Bool { hostKey != nil }

    /// Whether the holder controls the session: always where everyone does, and with the host
    /// key's seed where only hosts do.
    public var controls: Bool { hostKey == nil || hostSeed != nil }

    /// The viewer invite of the same session: without the host key's seed.
    public var viewer: Invite {
        var invite = self
        invite.hostSeed = nil
        return invite
    }

    /// Every relay address the invite names, ``host``:``port`` first.
    public var relays: [RelayAddress] { [RelayAddress(host: host, port: port)] + otherRelays }

    /// Parses `coplay[s]://HOST:PORT[,HOST:PORT…]/SESSION[?aead=SUITE][&pin=PIN]#SECRET`.
    ///
    /// Other query parameters are reserved and ignored; an `aead` this version does not know is an
    /// error, never a silent fallback to another algorithm, and so is a malformed `pin`.
    ///
    /// - Throws: ``InviteError`` naming the part that is wrong.
    public init(parsing text: String) throws(InviteError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let lowered = trimmed.lowercased()
        let usesTLS = lowered.hasPrefix("coplays://")
        guard usesTLS || lowered.hasPrefix("coplay://") else { throw .badScheme(text) }
        let rest = trimmed.dropFirst(usesTLS ? "coplays://".count : "coplay://".count)
        guard let hash = rest.firstIndex(of: "#") else { throw .missingSecret }
        let beforeFragment = rest[..<hash]
        let fragment = rest[rest.index(after: hash)...]
        guard let slash = beforeFragment.firstIndex(of: "/") else { throw .missingSession }
        let authority = beforeFragment[..<slash]
        var sessionText = beforeFragment[beforeFragment.index(after: slash)...]
        var suite = PayloadSuite.default
        var pin: [UInt8]?
        var hostKey: [UInt8]?
        if let question = sessionText.firstIndex(of: "?") {
            let query = sessionText[sessionText.index(after: question)...]
            sessionText = sessionText[..<question]
            for parameter in query.split(separator: "&") {
                let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let value = pair.count > 1 ? String(pair[1]) : ""
                switch pair[0] {
                case "aead":
                    guard let named = PayloadSuite(rawValue: value.lowercased()) else { throw .unknownSuite(value) }
                    suite = named
                case "pin":
                    guard let bytes = Base64URL.decode(value), bytes.count == 32 else { throw .badPin(value) }
                    guard usesTLS else { throw .pinWithoutTLS }
                    pin = bytes
                case "host":
                    guard let bytes = Base64URL.decode(value), bytes.count == 32,
                        (try? Curve25519.Signing.PublicKey(rawRepresentation: bytes)) != nil
                    else { throw .badHostKey(value) }
                    hostKey = bytes
                default:
                    continue
                }
            }
        }

        // Host and port, or several separated by commas; IPv6 literals are bracketed.
        var addresses: [RelayAddress] = []
        for part in authority.split(separator: ",", omittingEmptySubsequences: false) {
            addresses.append(try RelayAddress(parsing: part))
        }
        let first = addresses.removeFirst()
        guard !sessionText.isEmpty else { throw .missingSession }
        guard let session = SessionID(hex: sessionText) else { throw .badSession(String(sessionText)) }
        guard !fragment.isEmpty else { throw .missingSecret }
        let fragmentParts = fragment.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let secret = Base64URL.decode(fragmentParts[0]), secret.count == Self.secretLength else {
            throw .badSecret
        }
        var hostSeed: [UInt8]?
        if fragmentParts.count > 1 {
            guard let hostKey else { throw .seedWithoutHostKey }
            guard let seed = Base64URL.decode(fragmentParts[1]), seed.count == 32,
                let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed),
                Array(key.publicKey.rawRepresentation) == hostKey
            else { throw .badHostSeed }
            hostSeed = seed
        }
        self.init(
            host: first.host, port: first.port, session: session, secret: secret, suite: suite, usesTLS: usesTLS,
            relayKeyPin: pin)
        otherRelays = addresses
        self.hostKey = hostKey
        self.hostSeed = hostSeed
    }

    /// A key pin as an invite writes it (unpadded base64url of the 32 bytes).
    public static func keyPinText(_ pin: [UInt8]) -> String { Base64URL.encode(pin) }

    /// A key pin from its text form, or `nil` if it is not 32 bytes of base64url.
    public static func keyPin(parsing text: String) -> [UInt8]? {
        guard let bytes = Base64URL.decode(text), bytes.count == 32 else { return nil }
        return bytes
    }

    /// The invite URL (`?aead=` only for a suite other than the default).
    public var description: String {
        "\(address)#\(Base64URL.encode(secret))" + (hostSeed.map { "." + Base64URL.encode($0) } ?? "")
    }

    /// The invite without its secret, safe to log.
    public var redacted: String {
        "\(address)#…"
    }

    private var address: String {
        let hostPart = relays.map(\.description).joined(separator: ",")
        var parameters: [String] = []
        if suite != .default { parameters.append("aead=\(suite)") }
        if let relayKeyPin { parameters.append("pin=\(Base64URL.encode(relayKeyPin))") }
        if let hostKey { parameters.append("host=\(Base64URL.encode(hostKey))") }
        let query = parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
        return "\(usesTLS ? "coplays" : "coplay")://\(hostPart)/\(session)\(query)"
    }
}

/// One relay node's address in an invite: `HOST:PORT` (`[IPv6]:PORT`).
public struct RelayAddress: Hashable, Sendable, CustomStringConvertible {
    /// Host name or address (IPv6 without brackets).
    public var host: String
    /// TCP port.
    public var port: Int

    /// An address from its parts.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` or `[IPv6]:PORT`.
    ///
    /// - Throws: ``InviteError`` naming what is wrong.
    public init(parsing authority: some StringProtocol) throws(InviteError) {
        let authority = Substring(authority)
        let host: Substring
        let portText: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .badHost(String(authority)) }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard after.hasPrefix(":") else { throw .missingPort }
            portText = after.dropFirst()
        } else {
            guard let colon = authority.lastIndex(of: ":") else {
                if authority.isEmpty { throw .badHost("") }
                throw .missingPort
            }
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "@" || $0 == "," }) else {
            throw .badHost(String(host))
        }
        guard let port = Int(portText), (1...65535).contains(port) else { throw .badPort(String(portText)) }
        self.init(host: String(host), port: port)
    }

    /// `HOST:PORT`, an IPv6 host in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Unpadded base64url (RFC 4648 section 5).
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            return nil
        }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64).map { Array($0) }
    }
}
