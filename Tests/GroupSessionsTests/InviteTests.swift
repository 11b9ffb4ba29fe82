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

@Suite("Invites of sessions where only hosts control")
struct HostInviteTests {
    @Test("a controller invite carries the host key in the query and its seed after the secret; the viewer invite drops the seed")
    func controllerAndViewer() throws {
        let controller = Invite.generate(host: "127.0.0.1", port: 7000, suite: .aes256GCM).withNewHostKey()
        #expect(controller.onlyHostsControl && controller.controls)
        let text = controller.description
        let hostKey = try #require(controller.hostKey)
        let seed = try #require(controller.hostSeed)
        #expect(text.contains("&host="))
        #expect(text.hasSuffix("." + text.split(separator: ".").last!))
        let parsed = try Invite(parsing: text)
        #expect(parsed == controller)
        #expect(parsed.hostKey == hostKey && parsed.hostSeed == seed)
        #expect(!controller.redacted.contains(String(text.split(separator: "#")[1])))

        let viewer = controller.viewer
        #expect(viewer.onlyHostsControl && !viewer.controls)
        #expect(viewer.hostKey == hostKey && viewer.hostSeed == nil)
        #expect(!viewer.description.contains("."  + String(text.split(separator: ".").last!)))
        #expect(try Invite(parsing: viewer.description) == viewer)
        // An invite of a session where everyone controls has neither, and its holder controls.
        let everyone = Invite.generate(host: "127.0.0.1", port: 7000)
        #expect(!everyone.onlyHostsControl && everyone.controls && everyone.viewer == everyone)
    }

    @Test("a seed that is not the host key's, a seed without a host key, and a malformed host key are refused")
    func refused() throws {
        let one = Invite.generate(host: "h", port: 1).withNewHostKey()
        let other = Invite.generate(host: "h", port: 1).withNewHostKey()
        let mixed = one.viewer.description + "." + String(other.description.split(separator: ".").last!)
        #expect(throws: InviteError.badHostSeed) { try Invite(parsing: mixed) }
        let noKey = Invite.generate(host: "h", port: 1).description + "." + String(one.description.split(separator: ".").last!)
        #expect(throws: InviteError.seedWithoutHostKey) { try Invite(parsing: noKey) }
        let badKey = one.viewer.description.replacingOccurrences(of: "host=", with: "host=AAAA")
        #expect { try Invite(parsing: badKey) } throws: { "\($0)".contains("host key") }
        let shortSeed = one.viewer.description + ".AAAA"
        #expect(throws: InviteError.badHostSeed) { try Invite(parsing: shortSeed) }
    }
}

extension HostInviteTests {
    /// The same text as `Tests/Web/hostinvite.test.mjs`: seed 32 × 0x07, secret 32 × 0x01.
    static let controllerText =
        "coplay://127.0.0.1:7000/000102030405060708090a0b0c0d0e0f?aead=aes-256-gcm&host=6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"
        + "#AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE.BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc"

    @Test("the page's fixed controller invite parses here, its seed is its host key's, and it formats back the same")
    func sharedText() throws {
        let invite = try Invite(parsing: Self.controllerText)
        #expect(invite.hostSeed == [UInt8](repeating: 7, count: 32))
        #expect(invite.secret == [UInt8](repeating: 1, count: 32))
        #expect(invite.description == Self.controllerText)
        #expect(invite.viewer.description == String(Self.controllerText.split(separator: ".").dropLast().joined(separator: ".")))
    }
}
