import GroupSessions
import Testing

@Suite("Invites")
struct InviteTests {
    @Test("a generated invite round-trips through its text form")
    func roundTrip() throws {
        for host in ["127.0.0.1", "relay.example.org", "::1"] {
            let invite = Invite.generate(host: host, port: 7000)
            let parsed = try Invite(parsing: invite.description)
            #expect(parsed == invite)
            #expect(invite.secret.count == 32)
            #expect(!invite.redacted.contains(invite.description.split(separator: "#")[1]))
        }
    }

    @Test("the suite travels in the invite: ?aead= for AES-256-GCM, nothing for the default")
    func suiteRoundTrip() throws {
        let aes = Invite.generate(host: "127.0.0.1", port: 7000, suite: .aes256GCM)
        #expect(aes.description.contains("?aead=aes-256-gcm#"))
        #expect(aes.redacted.hasSuffix("?aead=aes-256-gcm#…"))
        #expect(try Invite(parsing: aes.description) == aes)
        let chacha = Invite.generate(host: "127.0.0.1", port: 7000)
        #expect(!chacha.description.contains("?"))
        #expect(try Invite(parsing: chacha.description).suite == .chaCha20Poly1305)
        let secret = chacha.description.split(separator: "#")[1]
        let explicit = "coplay://h:1/\(chacha.session)?aead=chacha20-poly1305#\(secret)"
        #expect(try Invite(parsing: explicit).suite == .chaCha20Poly1305)
        let otherParameter = "coplay://h:1/\(chacha.session)?future=1&aead=AES-256-GCM#\(secret)"
        #expect(try Invite(parsing: otherParameter).suite == .aes256GCM)
        #expect(try Invite(parsing: otherParameter).session == chacha.session)
    }

    @Test("an unknown cipher is an error, never a silent fallback")
    func unknownSuite() {
        let text = "coplay://h:80/00000000000000000000000000000001?aead=rot13#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        #expect {
            try Invite(parsing: text)
        } throws: { error in
            "\(error)".contains("rot13") && "\(error)".contains("aes-256-gcm")
        }
    }

    @Test("malformed invites give an error naming the wrong part", arguments: [
        ("http://h:1/00000000000000000000000000000001#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "coplay://"),
        ("coplay://h/00000000000000000000000000000001#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "port"),
        ("coplay://h:0/00000000000000000000000000000001#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "port"),
        ("coplay://h:70000/00000000000000000000000000000001#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "port"),
        ("coplay://:80/00000000000000000000000000000001#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "host"),
        ("coplay://h:80/xyz#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "hexadecimal"),
        ("coplay://h:80#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "session"),
        ("coplay://h:80/00000000000000000000000000000001", "SECRET"),
        ("coplay://h:80/00000000000000000000000000000001#short", "secret is not 32 bytes"),
        ("coplay://h:80/00000000000000000000000000000001#!!!", "secret is not 32 bytes"),
    ])
    func malformed(text: String, mention: String) {
        do {
            _ = try Invite(parsing: text)
            Issue.record("parsed \(text)")
        } catch {
            #expect(error.description.contains(mention), "\(error.description)")
        }
    }

    @Test("the secret is never echoed in an error")
    func secretNotEchoed() {
        let secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlYw"
        do {
            _ = try Invite(parsing: "coplay://h:80/00000000000000000000000000000001#\(secret)xx")
            Issue.record("parsed")
        } catch {
            #expect(!error.description.contains(secret))
        }
    }
}
