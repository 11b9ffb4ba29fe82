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
