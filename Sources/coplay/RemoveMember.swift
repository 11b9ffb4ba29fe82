import Foundation
import GroupChat
import GroupSessions
import Logging
import NIOSSL
import PlaybackCoordinator

/// `coplay control CONTROLLER_INVITE remove NAME` (docs/protocol.md, "Removing a member"): moves
/// everyone but NAME to a successor session under a fresh secret and host key, each remaining
/// member receiving the successor's invite sealed to its own sealing key, and ends the old session.
struct RemoveMember {
    var invite: Invite
    /// The member to remove, as people see it: `alice`, or `alice#3f9a2c` when the name is shared.
    var target: String
    /// This member's name (in the others' events: "you were removed from this session by NAME").
    var name: String
    var tls: TLSConfiguration?
    var logger: Logger

    /// Why a removal cannot be made.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// Checks the invite before anything is sent.
    static func check(_ invite: Invite) throws(Refusal) {
        guard invite.onlyHostsControl else {
            throw Refusal(description: """
                remove works in sessions where only hosts control (coplay host --control hosts): in this session \
                everyone controls, and whoever holds its invite could join it again anyway
                """)
        }
        guard invite.controls else {
            throw Refusal(description: "remove needs the session's controller invite (the one `coplay host --control hosts` printed, …#SECRET.SEED): this is a viewer invite")
        }
    }

    /// What happened, for the person.
    struct Outcome {
        var removed: String
        var moved: [String]
        var leftBehind: [String]
        /// The names of the granted members whose grant the host key re-issued in the successor.
        var grants: [String]
        var successor: Invite
    }

    /// Joins, finds NAME and the others' sealing keys, opens the successor with the group's state and
    /// queue, sends the removal in the old session, ends it, and stays in the successor until the
    /// others arrived (at most 10 s; the relay keeps a session only while someone is in it).
    func run() async throws -> Outcome {
        try Self.check(invite)
        guard let seed = invite.hostSeed else { throw Refusal(description: "no host key in the invite") }
        let hostKey = try MemberKey(seed: seed)
        let address = "\(invite.host):\(invite.port)"
        let session = try await ChatCommand.acceptedSession(invite: invite, tls: tls, logger: logger)
        // Listening before joining: the others announce who they are (and their sealing keys) to
        // this member as soon as its `joined` reaches them; the role statements retained in the
        // session (who was granted control) are handed over at once.
        let chat = try ChatChannel(session: session, key: MemberKey(), name: name, logger: logger)
        guard let roles = RoleGate(session: session, invite: invite, memberKey: MemberKey(), logger: logger) else {
            throw Refusal(description: "no host key in the invite")
        }
        do {
            try await session.join()
        } catch {
            session.leave()
            throw PlaybackSetupError.inviteRefused(address, error)
        }
        let announcing = Task { await chat.run() }
        defer { announcing.cancel() }
        do {
            return try await remove(in: session, chat: chat, roles: roles, hostKey: hostKey)
        } catch {
            await session.leave(waitingUpTo: .seconds(2))
            throw error
        }
    }

    private func remove(
        in session: GroupSession<WatchTogetherActivity>, chat: ChatChannel<WatchTogetherActivity>,
        roles: RoleGate<WatchTogetherActivity>, hostKey: MemberKey
    ) async throws -> Outcome {
        var options = GroupPlayback<WatchTogetherActivity, ContinuousClock>.Options()
        options.converge = false
        // Through the session's gate: the group's state and queue are signed commands there.
        let playback = try await GroupPlayback.prepare(session: session, timeServer: invite, options: options, gate: roles, logger: logger)
        let coordinator = playback.makeCoordinator(delegate: CommandOnlyDelegate(), name: name, oneShot: true)
        let running = Task { await coordinator.run() }
        defer { running.cancel() }
        guard await ControlCommand.poll(for: .seconds(5), { await coordinator.state != nil }) else {
            throw PlaybackSetupError.noPlaybackState
        }
        try await coordinator.announce()
        _ = await ControlCommand.poll(for: .seconds(5)) { await coordinator.hasQueue }
        // Everyone who plays has said who it is and where to seal to (a one-shot member, another
        // `coplay control`, says neither).
        let local = session.localParticipant.id
        _ = await ControlCommand.poll(for: .seconds(4)) {
            let oneShot = await coordinator.oneShotMembers
            let sealed = Set(chat.members.map(\.participant))
            return session.activeParticipants.allSatisfy { member in
                member.id == local || sealed.contains(member.id)
                    || oneShot.contains(GroupSessionCoordinationChannel<WatchTogetherActivity>.participant(member))
            }
        }
        let people = chat.identities.filter { $0.identity.key != chat.publicKey }
        let matching = Self.resolve(target, among: people)
        guard let removed = matching.first else {
            let names = Set(people.map(\.label)).sorted().joined(separator: ", ")
            throw Refusal(description: "nobody here is called \(target)\(names.isEmpty ? "" : " (members: \(names))")")
        }
        guard Set(matching.map(\.identity.key)).count == 1 else {
            let labels = matching.map(\.label).joined(separator: ", ")
            throw Refusal(description: "several members are called \(target): say which one, \(labels)")
        }
        let removedKey = removed.identity.key

        // The successor: same relay and cipher, a fresh session id, secret and host key.
        var successorInvite = Invite.generate(
            host: invite.host, port: invite.port, suite: invite.suite, usesTLS: invite.usesTLS, relayKeyPin: invite.relayKeyPin)
        successorInvite.otherRelays = invite.otherRelays
        successorInvite = successorInvite.withNewHostKey()
        let recipients = chat.members.filter { $0.key != removedKey && $0.key != chat.publicKey }
        let sealedKeys = Set(recipients.map(\.key))
        let leftBehind = people.filter { $0.identity.key != removedKey && !sealedKeys.contains($0.identity.key) }.map(\.label)

        let successorCenter = GroupActivityCenter<WatchTogetherActivity>(
            transport: RelayTransport(invite: successorInvite, tls: tls), logger: logger)
        let successor = try await successorCenter.activate(session.activity, invite: successorInvite)
        // The successor's own gate (its host key is the successor's): it signs the state and queue
        // sent there, as every member's gate there requires.
        guard let successorRoles = RoleGate(session: successor, invite: successorInvite, memberKey: MemberKey(), logger: logger),
            let successorSeed = successorInvite.hostSeed
        else { throw Refusal(description: "the successor invite has no host key") }
        try await successor.join()
        // The grants in force now carry over, but the removed member's: the successor's host key
        // re-issues them there, retained, before anyone arrives (docs/protocol.md, "Roles in the
        // successor").
        let book = roles.book
        let carried = book.granted.filter { $0 != removedKey }.compactMap { key in book.statements[key].map { (key, $0.name) } }
        do {
            let successorHost = try MemberKey(seed: successorSeed)
            for (key, grantedName) in carried {
                let statement = try RoleStatement(
                    signedBy: successorHost, session: successor.id, action: .grant, key: key, name: grantedName,
                    issuedAt: UInt64(max(0, Date().timeIntervalSince1970 * 1e9)))
                try await RoleGate.publish(statement, on: successor)
            }
            // The group's state and queue, unchanged, retained there before anyone arrives.
            let channel = GroupSessionCoordinationChannel(session: successor, gate: successorRoles, logger: logger)
            guard let now = playback.reference.now() else { throw PlaybackSetupError.noPlaybackState }
            try await channel.send(
                .presence(PresenceReport(sentAt: now, observedDelay: .zero, preroll: .zero, item: nil, name: name, oneShot: true)),
                retainingUnder: nil)
            for (message, key) in await coordinator.successorMessages(sentAt: now) {
                try await channel.send(message, retainingUnder: key)
            }
            let removal = try Removal(
                signedBy: hostKey, session: session.id, removed: removedKey, removedName: removed.identity.name,
                issuedAt: UInt64(max(0, Date().timeIntervalSince1970 * 1e9)),
                recipients: recipients.map {
                    Removal.Recipient(
                        key: $0.key, sealingKey: $0.sealingKey,
                        invite: ($0.isController ? successorInvite : successorInvite.viewer).description)
                })
            try await chat.send(removal: removal)
            try session.end()
        } catch {
            successor.leave()
            throw error
        }
        // Whoever moves joins within a second or two; the session must not be empty before.
        _ = await ControlCommand.poll(for: .seconds(10)) { successor.activeParticipants.count > recipients.count }
        try? await Task.sleep(for: .milliseconds(500))
        await successor.leave(waitingUpTo: .seconds(2))
        return Outcome(
            removed: removed.label, moved: recipients.map(\.label), leftBehind: leftBehind, grants: carried.map(\.1).sorted(),
            successor: successorInvite)
    }

    /// The members `target` names: by label (`alice#3f9a2c`), else by name.
    static func resolve(_ target: String, among people: [(label: String, identity: MemberIdentity)]) -> [(label: String, identity: MemberIdentity)] {
        let byLabel = people.filter { $0.label == target }
        return byLabel.isEmpty ? people.filter { $0.identity.name == target } : byLabel
    }
}
