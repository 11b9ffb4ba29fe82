/// Why a string is not a valid coplay invite.
public struct InviteError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case badScheme, missingPort, badPort, badHost, missingSession, badSession, missingSecret, badSecret, unknownSuite, badPin,
            pinWithoutTLS, badHostKey, badHostSeed, seedWithoutHostKey
    }

    private let code: Code
    private let detail: String

    /// The text does not start with `coplay://`.
    public static func badScheme(_ text: String) -> Self { Self(code: .badScheme, detail: String(text.prefix(16))) }
    /// No `:PORT` after the host.
    public static var missingPort: Self { Self(code: .missingPort, detail: "") }
    /// The port is not a number in 1...65535.
    public static func badPort(_ text: String) -> Self { Self(code: .badPort, detail: text) }
    /// The host is empty or contains characters a host cannot have.
    public static func badHost(_ text: String) -> Self { Self(code: .badHost, detail: text) }
    /// No `/SESSION` after the port.
    public static var missingSession: Self { Self(code: .missingSession, detail: "") }
    /// The session is not 32 hexadecimal digits.
    public static func badSession(_ text: String) -> Self { Self(code: .badSession, detail: text) }
    /// No `#SECRET` fragment.
    public static var missingSecret: Self { Self(code: .missingSecret, detail: "") }
    /// The secret is not 32 bytes of base64url (its content is never echoed).
    public static var badSecret: Self { Self(code: .badSecret, detail: "") }
    /// The `pin` query is not 32 bytes of base64url.
    public static func badPin(_ text: String) -> Self { Self(code: .badPin, detail: String(text.prefix(60))) }
    /// A `pin` in a plain `coplay://` invite (pins are for TLS relays: `coplays://`).
    public static var pinWithoutTLS: Self { Self(code: .pinWithoutTLS, detail: "") }
    /// The `host` query is not an Ed25519 public key in base64url.
    public static func badHostKey(_ text: String) -> Self { Self(code: .badHostKey, detail: String(text.prefix(60))) }
    /// The seed after the secret is not 32 bytes of base64url, or not the seed of the `host` key (never echoed).
    public static var badHostSeed: Self { Self(code: .badHostSeed, detail: "") }
    /// A seed after the secret, but no `host` query naming its key.
    public static var seedWithoutHostKey: Self { Self(code: .seedWithoutHostKey, detail: "") }
    /// The `aead` query names no ``PayloadSuite`` this version knows.
    public static func unknownSuite(_ text: String) -> Self { Self(code: .unknownSuite, detail: String(text.prefix(40))) }

    public var description: String {
        let form = "expected coplay://HOST:PORT/SESSION#SECRET (coplays:// for a TLS relay)"
        switch code {
        case .badScheme: return "invite must start with coplay:// or coplays:// (got \"\(detail)…\"); \(form)"
        case .missingPort: return "invite has no port after the host; \(form)"
        case .badPort: return "invite port \"\(detail)\" is not a number between 1 and 65535"
        case .badHost: return "invite host \"\(detail)\" is not a valid host"
        case .missingSession: return "invite has no session after the port; \(form)"
        case .badSession: return "invite session \"\(detail)\" is not 32 hexadecimal digits"
        case .missingSecret: return "invite has no #SECRET fragment; \(form)"
        case .badSecret: return "invite secret is not 32 bytes of base64url"
        case .badPin: return "invite pin \"\(detail)\" is not a SHA-256 in base64url (43 characters)"
        case .pinWithoutTLS: return "invite pins a certificate key but says coplay://, not coplays:// (TLS)"
        case .badHostKey: return "invite host key \"\(detail)\" is not an Ed25519 public key in base64url (43 characters)"
        case .badHostSeed: return "invite host seed (after the secret's dot) is not the seed of the invite's host key"
        case .seedWithoutHostKey: return "invite carries a host seed after its secret but names no host key (&host=)"
        case .unknownSuite:
            let known = PayloadSuite.allCases.map(\.rawValue).joined(separator: ", ")
            return "invite asks for the cipher \"\(detail)\", which this coplay does not speak (known: \(known))"
        }
    }
}
