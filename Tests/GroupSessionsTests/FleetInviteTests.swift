import GroupSessions
import Testing

/// Invites naming several nodes of one relay service (docs/scaling.md).
@Suite("Fleet invites")
struct FleetInviteTests {
    static let secret = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
    static let session = "00112233445566778899aabbccddeeff"

    @Test("a fleet invite lists every node, the first as host and port, and prints back the same")
    func parsesAndPrints() throws {
        let text = "coplays://10.0.0.1:7000,relay-b.example:7001,[::1]:7002/\(Self.session)?aead=aes-256-gcm#\(Self.secret)"
        let invite = try Invite(parsing: text)
        #expect(invite.host == "10.0.0.1" && invite.port == 7000)
        #expect(invite.otherRelays == [RelayAddress(host: "relay-b.example", port: 7001), RelayAddress(host: "::1", port: 7002)])
        #expect(invite.relays.map(\.description) == ["10.0.0.1:7000", "relay-b.example:7001", "[::1]:7002"])
        #expect(invite.usesTLS)
        #expect(invite.description == text)
        #expect(try Invite(parsing: invite.description) == invite)
    }

    @Test("a one-address invite is unchanged: no other relays, the same text")
    func oneAddress() throws {
        let text = "coplay://127.0.0.1:7000/\(Self.session)#\(Self.secret)"
        let invite = try Invite(parsing: text)
        #expect(invite.otherRelays.isEmpty)
        #expect(invite.description == text)
    }

    @Test("a bad address anywhere in the list is refused by name")
    func badAddresses() {
        #expect(throws: InviteError.self) { try Invite(parsing: "coplay://127.0.0.1:7000,/\(Self.session)#\(Self.secret)") }
        #expect(throws: InviteError.badPort("0")) { try Invite(parsing: "coplay://127.0.0.1:7000,h:0/\(Self.session)#\(Self.secret)") }
        #expect(throws: InviteError.missingPort) { try Invite(parsing: "coplay://127.0.0.1:7000,nohost/\(Self.session)#\(Self.secret)") }
    }
}
