/// The browser client's link for an invite (`docs/protocol.md`, "Web client").
extension Invite {
    /// The page the relay serves for this session:
    /// `http://HOST:PORT/#invite=<percent-encoded invite>[&media=<URL>][&name=<name>]`.
    ///
    /// Everything sits in the URL's fragment, which browsers never send to a server, so the
    /// relay serving the page never receives the secret. Browsers speak only AES-256-GCM
    /// (``PayloadSuite/aes256GCM``); the page refuses a ChaCha20-Poly1305 invite with a message.
    ///
    /// - Parameters:
    ///   - secure: `https` instead of `http`; by default, whether the invite says TLS (`coplays://`).
    ///   - media: a URL the page loads the media from; without it the page asks for a file.
    ///   - name: the display name the page joins with.
    public func webPageURL(secure: Bool? = nil, media: String? = nil, name: String? = nil) -> String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        var fragment = "invite=\(Self.percentEncoded(description))"
        if let media { fragment += "&media=\(Self.percentEncoded(media))" }
        if let name { fragment += "&name=\(Self.percentEncoded(name))" }
        return "\(secure ?? usesTLS ? "https" : "http")://\(hostPart):\(port)/#\(fragment)"
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters (what JavaScript's
    /// `encodeURIComponent` leaves alone, minus `!'()*`).
    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += byte < 16 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return result
    }
}
