import Foundation
import GroupChat
import GroupSessions
import Logging
import PlaybackCoordinator
import Synchronization
import Testing
import TestSupport

/// Sealing keys, the `sealingKey` statement and the `removal` message (docs/protocol.md, "Removing a member").
@Suite struct RemovalTests {
    static let session = SessionID(hex: "00112233445566778899aabbccddeeff")!
    static let other = SessionID(hex: "ffeeddccbbaa99887766554433221100")!
    var session: SessionID { Self.session }

    @Test func sealedSecretsOpenOnlyWithTheirKeyAndInfo() throws {
        let key = SealingKey()
        let stranger = SealingKey()
        let info = Array("coplay test".utf8)
        let box = try Sealing.seal(Array("the successor".utf8), to: key.publicKey, info: info)
        #expect(box.encapsulatedKey.count == 32)
        #expect(box.ciphertext.count == "the successor".utf8.count + 16)
        #expect(String(decoding: try Sealing.open(box, with: key, info: info), as: UTF8.self) == "the successor")
        #expect(throws: (any Error).self) { try Sealing.open(box, with: stranger, info: info) }
        #expect(throws: (any Error).self) { try Sealing.open(box, with: key, info: Array("other".utf8)) }
        var altered = box
        altered.ciphertext[0] ^= 1
        #expect(throws: (any Error).self) { try Sealing.open(altered, with: key, info: info) }
        var otherEnc = box
        otherEnc.encapsulatedKey = try Sealing.seal([1], to: key.publicKey, info: info).encapsulatedKey
        #expect(throws: (any Error).self) { try Sealing.open(otherEnc, with: key, info: info) }
        // Each seal is fresh (a new ephemeral key): the same secret twice gives two boxes.
        #expect(try Sealing.seal(Array("the successor".utf8), to: key.publicKey, info: info) != box)
        // A key rebuilt from its bytes opens what was sealed to it.
        #expect(SealingPublicKey(text: key.publicKey.text) == key.publicKey)
        #expect(SealingPublicKey(bytes: [1, 2, 3]) == nil)
    }

    @Test func sealingKeyStatementsAreBoundToTheMemberKeyTheSessionAndTheHostKey() throws {
        let member = MemberKey()
        let host = MemberKey()
        let sealing = SealingKey()
        let viewer = try SealingKeyStatement(signedBy: member, sealingKey: sealing.publicKey, session: session)
        #expect(viewer.isValid(in: session))
        #expect(!viewer.isValid(in: Self.other), "copied from another session")
        #expect(!viewer.isController(in: session, hostKey: host.publicKey), "no attestation")
        var swapped = viewer
        swapped.sealingKey = SealingKey().publicKey
        #expect(!swapped.isValid(in: session), "another sealing key under the member's signature")

        let controller = try SealingKeyStatement(signedBy: member, sealingKey: sealing.publicKey, session: session, hostKey: host)
        #expect(controller.isController(in: session, hostKey: host.publicKey))
        #expect(!controller.isController(in: session, hostKey: MemberKey().publicKey), "attested by another host key")
        #expect(!controller.isController(in: Self.other, hostKey: host.publicKey))
        // An attestation moved to another member's statement does not hold.
        var borrowed = try SealingKeyStatement(signedBy: MemberKey(), sealingKey: SealingKey().publicKey, session: session)
        borrowed.controller = controller.controller
        #expect(borrowed.isValid(in: session))
        #expect(!borrowed.isController(in: session, hostKey: host.publicKey))

        // JSON round trip, as a member message.
        for statement in [viewer, controller] {
            let data = try JSONEncoder().encode(MemberMessage.sealingKey(statement))
            #expect(try JSONDecoder().decode(MemberMessage.self, from: data) == .sealingKey(statement))
        }
    }

    struct Member {
        let key = MemberKey()
        let sealing = SealingKey()
        var recipient: (String) -> Removal.Recipient {
            { Removal.Recipient(key: key.publicKey, sealingKey: sealing.publicKey, invite: $0) }
        }
    }

    @Test func aRemovalOpensForEachRemainingMemberAndNotForTheRemovedOne() throws {
        let host = MemberKey()
        let (alice, carol, bob) = (Member(), Member(), Member())
        let removal = try Removal(
            signedBy: host, session: session, removed: bob.key.publicKey, removedName: "bob", issuedAt: 7,
            recipients: [alice.recipient("invite for alice"), carol.recipient("invite for carol")])
        #expect(removal.isValid(in: session, hostKey: host.publicKey))
        #expect(try removal.invite(for: alice.key.publicKey, sealingKey: alice.sealing, session: session) == "invite for alice")
        #expect(try removal.invite(for: carol.key.publicKey, sealingKey: carol.sealing, session: session) == "invite for carol")
        #expect(try removal.invite(for: bob.key.publicKey, sealingKey: bob.sealing, session: session) == nil)
        // The removed member's sealing key opens none of the boxes, under any member's info.
        for sealed in removal.invites {
            for key in [alice.key.publicKey, carol.key.publicKey, bob.key.publicKey] {
                #expect(throws: (any Error).self) {
                    try Sealing.open(sealed.box, with: bob.sealing, info: Removal.info(session: session, key: key))
                }
            }
        }
        // A member cannot open another's box with its own sealing key, nor its own in another session.
        #expect(throws: (any Error).self) { try removal.invite(for: carol.key.publicKey, sealingKey: alice.sealing, session: session) }
        #expect(throws: (any Error).self) { try removal.invite(for: alice.key.publicKey, sealingKey: alice.sealing, session: Self.other) }

        let data = try JSONEncoder().encode(MemberMessage.removal(removal))
        #expect(try JSONDecoder().decode(MemberMessage.self, from: data) == .removal(removal))
    }

    @Test func forgedAlteredOrMisdirectedRemovalsDoNotVerify() throws {
        let host = MemberKey()
        let (alice, bob) = (Member(), Member())
        let removal = try Removal(
            signedBy: host, session: session, removed: bob.key.publicKey, removedName: "bob", issuedAt: 7,
            recipients: [alice.recipient("invite for alice")])
        #expect(removal.isValid(in: session, hostKey: host.publicKey))
        let forger = MemberKey()
        let forged = try Removal(
            signedBy: forger, session: session, removed: alice.key.publicKey, removedName: "alice", issuedAt: 8,
            recipients: [bob.recipient("invite for bob")])
        #expect(!forged.isValid(in: session, hostKey: host.publicKey), "signed by another key")
        #expect(!removal.isValid(in: Self.other, hostKey: host.publicKey), "copied into another session")
        var alterations: [Removal] = []
        var other = removal
        other.removed = alice.key.publicKey
        alterations.append(other)
        other = removal
        other.removedName = "carol"
        alterations.append(other)
        other = removal
        other.issuedAt += 1
        alterations.append(other)
        other = removal
        other.invites[0].box.ciphertext[3] ^= 0x40
        alterations.append(other)
        other = removal
        other.invites[0].sealingKey = bob.sealing.publicKey
        alterations.append(other)
        other = removal
        other.invites.append(other.invites[0])
        alterations.append(other)
        other = removal
        other.invites = []
        alterations.append(other)
        for altered in alterations { #expect(!altered.isValid(in: session, hostKey: host.publicKey)) }
        // An invite for the removed key makes the removal invalid even when signed.
        let contradictory = try Removal(
            signedBy: host, session: session, removed: bob.key.publicKey, removedName: "bob", issuedAt: 9,
            recipients: [bob.recipient("x")])
        #expect(!contradictory.isValid(in: session, hostKey: host.publicKey))
    }

    /// A test activity.
    struct Show: GroupActivity, Equatable {
        var title = "show"
        var metadata: GroupActivityMetadata { GroupActivityMetadata(title: title, type: .watchTogether) }
    }

    /// One member's chat channel over the in-memory transport, with what its removal handler saw.
    final class Joined: Sendable {
        let session: GroupSession<Show>
        let chat: ChatChannel<Show>
        let outcomes: Outcomes
        let task: Task<Void, Never>

        final class Outcomes: Sendable {
            let values = Mutex<[RemovalOutcome]>([])
        }

        init(_ transport: InMemoryTransport, invite: Invite, name: String, create: Bool = false) async throws {
            let center = GroupActivityCenter<Show>(transport: transport, logger: Logger(label: "test"))
            let session = create ? try await center.activate(Show(), invite: invite) : try await center.accept(invite)
            let outcomes = Outcomes()
            let chat = try ChatChannel(session: session, key: MemberKey(), name: name, logger: Logger(label: "test")) { outcome in
                outcomes.values.withLock { $0.append(outcome) }
            }
            try await session.join()
            self.session = session
            self.chat = chat
            self.outcomes = outcomes
            task = Task { await chat.run() }
        }

        var seen: [RemovalOutcome] { outcomes.values.withLock { $0 } }
    }

    @Test func membersMoveOnTheHostsRemovalAndIgnoreForgedOrAlteredOnes() async throws {
        let transport = InMemoryTransport()
        let invite = Invite.generate(host: "local", port: 1).withNewHostKey()
        let host = try await Joined(transport, invite: invite, name: "host", create: true)
        let alice = try await Joined(transport, invite: invite.viewer, name: "alice")
        let bob = try await Joined(transport, invite: invite.viewer, name: "bob")
        let remover = try await Joined(transport, invite: invite, name: "remover")
        defer { for member in [host, alice, bob, remover] { member.task.cancel() } }
        let others = { remover.chat.members.filter { $0.key != remover.chat.publicKey } }
        await eventually("the remover knows every other member's sealing key") { others().count == 3 }
        let members = Dictionary(uniqueKeysWithValues: others().map { ($0.name, $0) })
        #expect(members["host"]?.isController == true, "the host key attested the host's member key")
        #expect(members["alice"]?.isController == false)
        #expect(members["bob"]?.isController == false)
        let hostKey = try MemberKey(seed: try #require(invite.hostSeed))
        let recipients = ["host", "alice"].compactMap { members[$0] }.map {
            Removal.Recipient(key: $0.key, sealingKey: $0.sealingKey, invite: "successor for \($0.name)")
        }
        let bobKey = try #require(members["bob"]?.key)
        let messenger = GroupSessionMessenger(session: bob.session)

        // Bob, holding only the viewer invite, forges a removal of alice: signed by his own key.
        let forged = try Removal(
            signedBy: MemberKey(), session: host.session.id, removed: try #require(members["alice"]?.key), removedName: "alice",
            issuedAt: 1, recipients: recipients)
        try messenger.send(MemberMessage.removal(forged))
        // A genuine removal altered on the way (its first box changed).
        var altered = try Removal(
            signedBy: hostKey, session: host.session.id, removed: bobKey, removedName: "bob", issuedAt: 2, recipients: recipients)
        altered.invites[0].box.ciphertext[0] ^= 1
        try messenger.send(MemberMessage.removal(altered))
        await eventually("alice counted both as bad") { alice.chat.removalRejections[.badSignature] == 2 }
        #expect(alice.seen.isEmpty && host.seen.isEmpty && bob.seen.isEmpty)

        // The host key's removal of bob.
        let removal = try Removal(
            signedBy: hostKey, session: host.session.id, removed: bobKey, removedName: "bob", issuedAt: 3, recipients: recipients)
        try await remover.chat.send(removal: removal)
        await eventually("everyone handled it") { !alice.seen.isEmpty && !host.seen.isEmpty && !bob.seen.isEmpty }
        #expect(alice.seen == [.moved(invite: "successor for alice", removed: "bob", by: "remover")])
        #expect(host.seen == [.moved(invite: "successor for host", removed: "bob", by: "remover")])
        #expect(bob.seen == [.removed(by: "remover")])
        // A second one (a replay by the relay or a member) changes nothing.
        try messenger.send(MemberMessage.removal(removal))
        await eventually("alice counted the repeat") { alice.chat.removalRejections[.repeated] == 1 }
        #expect(alice.seen.count == 1)
    }

    @Test func aSessionWhereEveryoneControlsIgnoresRemovals() async throws {
        let transport = InMemoryTransport()
        let invite = Invite.generate(host: "local", port: 1)
        let host = try await Joined(transport, invite: invite, name: "host", create: true)
        let alice = try await Joined(transport, invite: invite, name: "alice")
        defer { for member in [host, alice] { member.task.cancel() } }
        await eventually("host knows alice's sealing key") { host.chat.members.count == 2 }  // host's own and alice's
        let anyKey = MemberKey()
        let removal = try Removal(
            signedBy: anyKey, session: host.session.id, removed: alice.chat.publicKey, removedName: "alice", issuedAt: 1, recipients: [])
        try await host.chat.send(removal: removal)
        await eventually("alice ignored it") { alice.chat.removalRejections[.noHostKey] == 1 }
        #expect(alice.seen.isEmpty)
    }

    /// Roles in the successor (docs/protocol.md, "Roles in the successor"): its book's root is the
    /// successor's host key; the grants in force carry over only as the remover re-issues them there
    /// (signed by that key, bound to the successor's id). Whatever the relay (or the removed member,
    /// holding the old host seed) replays or forges from the old session does not count there.
    @Test func grantsCarryToTheSuccessorOnlyAsReissuedByItsHostKey() throws {
        let (oldHost, newHost) = (MemberKey(), MemberKey())
        let (alice, bob, carol) = (MemberKey(), MemberKey(), MemberKey())
        let (aliceID, bobID, carolID) = (ParticipantID(rawValue: 0xa), ParticipantID(rawValue: 0xb), ParticipantID(rawValue: 0xc))
        func grant(_ key: MemberKey, _ name: String, by host: MemberKey, in session: SessionID, at: UInt64) throws -> RoleStatement {
            try RoleStatement(signedBy: host, session: session, action: .grant, key: key.publicKey, name: name, issuedAt: at)
        }
        // The old session: alice and bob granted.
        var old = RoleBook(session: Self.session, hostKey: oldHost.publicKey)
        let oldGrants = [try grant(alice, "alice", by: oldHost, in: Self.session, at: 1), try grant(bob, "bob", by: oldHost, in: Self.session, at: 2)]
        for statement in oldGrants { #expect((try? old.receive(statement).get()) != nil) }
        #expect(old.granted == [alice.publicKey, bob.publicKey].sorted())

        // The remover removes bob: the grants in force but bob's, re-issued by the new host key.
        let carried = old.granted.filter { $0 != bob.publicKey }
        var successor = RoleBook(session: Self.other, hostKey: newHost.publicKey)
        for key in carried {
            let name = try #require(old.statements[key]?.name)
            let reissued = try RoleStatement(signedBy: newHost, session: Self.other, action: .grant, key: key, name: name, issuedAt: 10)
            #expect((try? successor.receive(reissued).get()) != nil)
        }
        // Replayed old grants (bob's, alice's) do not verify there; nor does a grant the old host key
        // signs for the successor (a removed controller holds the old seed), nor a re-issued grant
        // of the successor replayed after a revocation.
        for statement in oldGrants { #expect(successor.receive(statement) == .failure(.badSignature)) }
        #expect(successor.receive(try grant(bob, "bob", by: oldHost, in: Self.other, at: 20)) == .failure(.badSignature))
        let revokeAlice = try RoleStatement(signedBy: newHost, session: Self.other, action: .revoke, key: alice.publicKey, name: "alice", issuedAt: 30)
        let aliceGrant = try #require(successor.statements[alice.publicKey])
        #expect((try? successor.receive(revokeAlice).get()) != nil)
        #expect(successor.receive(aliceGrant) == .failure(.stale))
        #expect(!successor.controls(alice.publicKey))
        #expect((try? successor.receive(try grant(alice, "alice", by: newHost, in: Self.other, at: 40)).get()) != nil)

        #expect(successor.controls(alice.publicKey) && !successor.controls(bob.publicKey) && !successor.controls(carol.publicKey))
        #expect(successor.controls(newHost.publicKey) && !successor.controls(oldHost.publicKey))
        // Commands: alice's counts; bob's, carol's and the old host key's do not; a command alice
        // signed in the old session, replayed, does not verify.
        let pause = RoleVectorTests.state(.pause, rate: 0, at: 5, sentAt: 1_000)
        #expect(successor.admit(RoleVectorTests.signed(pause, by: alice, as: aliceID, in: Self.other), from: aliceID) == .success(pause))
        #expect(successor.admit(RoleVectorTests.signed(pause, by: bob, as: bobID, in: Self.other), from: bobID) == .failure(.noControl))
        #expect(successor.admit(RoleVectorTests.signed(pause, by: carol, as: carolID, in: Self.other), from: carolID) == .failure(.noControl))
        #expect(successor.admit(RoleVectorTests.signed(pause, by: oldHost, as: bobID, in: Self.other), from: bobID) == .failure(.noControl))
        let play = RoleVectorTests.state(.play, rate: 1, at: 5, sentAt: 2_000)
        #expect(successor.admit(RoleVectorTests.signed(play, by: alice, as: aliceID, in: Self.session), from: aliceID) == .failure(.badSignature))
        #expect(successor.admit(play, from: aliceID) == .failure(.unsigned))
    }
}
