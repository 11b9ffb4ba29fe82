import Foundation
import GroupChat
import GroupSessions
import PlaybackCoordinator
import Testing
import TestSupport

/// The shared roles vectors `Tests/Vectors/roles/roles.json` (docs/protocol.md, "Roles: who may
/// control", "Shared vectors"), written here and read by `Tests/Web/roles.test.mjs`: the host key and
/// member keys from fixed seeds, role statements and signed commands with their exact JSON, the
/// bytes signed and the signatures, and `traces`: frames as a member receives them in the relay's
/// order, each with what a ``RoleBook`` does with it (`accepted`, or the rejection reason).
///
/// After a deliberate change: `COPLAY_WRITE_VECTORS=1 swift test --filter RoleVectorTests`, review the
/// diff, then make the page pass `node --test Tests/Web/`.
@Suite struct RoleVectorTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/roles/roles.json")
    static var writing: Bool { ProcessInfo.processInfo.environment["COPLAY_WRITE_VECTORS"] == "1" }

    static let session = SessionID(hex: "0123456789abcdef0123456789abcdef")!
    static let otherSession = SessionID(hex: "fedcba9876543210fedcba9876543210")!
    static let hostSeed: [UInt8] = Array(101...132)
    static let memberSeeds: [(name: String, seed: [UInt8], participant: ParticipantID)] = [
        ("alice", Array(1...32), ParticipantID(rawValue: 0x1111_2222_3333_4444)),
        ("mallory", Array(65...96), ParticipantID(rawValue: 0x9999_aaaa_bbbb_cccc)),
    ]
    static let host = ParticipantID(rawValue: 0x0000_0000_0000_00a1)
    /// The participant of a `coplay control` run that sends a statement.
    static let controlRun = ParticipantID(rawValue: 0x0000_0000_0000_00c2)
    static let hostKey = try! MemberKey(seed: hostSeed)
    static let alice = try! MemberKey(seed: memberSeeds[0].seed)
    static let mallory = try! MemberKey(seed: memberSeeds[1].seed)
    static let aliceID = memberSeeds[0].participant
    static let malloryID = memberSeeds[1].participant
    static let t0: UInt64 = 1_790_000_000_950_000_000

    struct Vector: Codable, Equatable {
        var description: String
        var session: String
        var hostSeed: String
        var hostKey: String
        var members: [Member]
        var statements: [Signed]
        var commands: [Signed]
        var traces: [Trace]
    }

    struct Member: Codable, Equatable {
        var name: String
        var seed: String
        var publicKey: String
        var participant: String
    }

    /// A statement or a signed command: its wire body (JSON text), the bytes signed (hex), the
    /// signature (base64url); for a command also its inner message (JSON text) and sender.
    struct Signed: Codable, Equatable {
        var name: String
        var body: String
        var canonical: String
        var signature: String
        var inner: String?
        var participant: String?
    }

    struct Trace: Codable, Equatable {
        var name: String
        var frames: [Frame]
    }

    /// One frame: the sender's participant (16 hex), the body (a member message, kind `role`, or a
    /// coordination message), and the outcome.
    struct Frame: Codable, Equatable {
        var participant: String
        var body: String
        var expect: String
    }




    static func state(_ command: CommandLabel, rate: Double, at seconds: Double, sentAt: UInt64) -> CoordinationMessage {
        .state(StateProposal(
            state: PlaybackState(
                item: "clip", rate: rate, anchorItemTime: seconds, anchorReferenceTime: ReferenceTime(nanoseconds: Int64(sentAt) + 150_000_000),
                originator: "0000000000000000", duration: 60),
            command: command, sentAt: ReferenceTime(nanoseconds: Int64(sentAt))))
    }

    static func statement(_ action: RoleStatement.Action, _ key: MemberPublicKey, _ name: String, at issuedAt: UInt64, by signer: MemberKey = hostKey, in session: SessionID = session) -> RoleStatement {
        try! RoleStatement(signedBy: signer, session: session, action: action, key: key, name: name, issuedAt: issuedAt)
    }

    static func signed(_ message: CoordinationMessage, by key: MemberKey, as participant: ParticipantID, in session: SessionID = session) -> CoordinationMessage {
        .signed(try! RoleBook.sign(message, with: key, session: session, participant: participant))
    }

    static func frame(_ participant: ParticipantID, _ message: MemberMessage, _ expect: String) -> Frame {
        Frame(participant: participant.description, body: try! json(message), expect: expect)
    }

    static func frame(_ participant: ParticipantID, _ message: CoordinationMessage, _ expect: String) -> Frame {
        Frame(participant: participant.description, body: try! json(message), expect: expect)
    }

    static func traces() -> [Trace] {
        let pause = state(.pause, rate: 0, at: 12.5, sentAt: t0)
        let hostPause = signed(pause, by: hostKey, as: host)
        guard case .signed(let good) = hostPause else { fatalError() }
        let altered: CoordinationMessage = {
            var copy = good
            copy.body = base64url(Array(try! json(state(.pause, rate: 0, at: 40, sentAt: t0)).utf8))
            return .signed(copy)
        }()
        let presence = CoordinationMessage.presence(PresenceReport(
            sentAt: ReferenceTime(nanoseconds: Int64(t0)), observedDelay: .milliseconds(3), preroll: .zero, item: "clip"))
        let play = state(.play, rate: 1, at: 12.5, sentAt: t0 + 1_000_000_000)
        let seek = state(.seek, rate: 1, at: 30, sentAt: t0 + 2_000_000_000)
        let edit = CoordinationMessage.queueEdit(QueueEditNotice(edit: .repeatMode(.all), sentAt: ReferenceTime(nanoseconds: Int64(t0 + 3_000_000_000))))
        let grant = statement(.grant, alice.publicKey, "alice", at: t0 + 500_000_000)
        let revoke = statement(.revoke, alice.publicKey, "alice", at: t0 + 2_500_000_000)
        let snapshot = { (part: Int) -> CoordinationMessage in
            .queueSnapshot(QueueSnapshotPart(
                snapshot: "00000000000000a1.1", request: nil, through: 7, part: part, parts: 2, entries: [], repeatMode: .off,
                shuffleSeed: nil, removedPlaying: nil, state: nil, sentAt: ReferenceTime(nanoseconds: Int64(t0 + 4_000_000_000))))
        }
        let advance = { (follows: String?) -> CoordinationMessage in
            .state(StateProposal(
                state: PlaybackState(
                    item: "next", rate: 1, anchorItemTime: 0, anchorReferenceTime: ReferenceTime(nanoseconds: Int64(t0 + 5_000_000_000)),
                    originator: "0000000000000000", duration: 60, entry: "e2"),
                command: .advance, sentAt: ReferenceTime(nanoseconds: Int64(t0 + 4_500_000_000)), follows: follows))
        }
        return [
            Trace(name: "the host's commands: signed by the host key they count once; copies, alterations, other senders and sessions do not", frames: [
                frame(host, hostPause, "accepted"),
                frame(host, hostPause, "replay"),
                frame(host, pause, "unsigned"),
                frame(host, presence, "accepted"),
                frame(host, altered, "badSignature"),
                frame(malloryID, hostPause, "badSignature"),
                frame(host, signed(play, by: hostKey, as: host, in: otherSession), "badSignature"),
                frame(host, .signed(SignedCoordinationMessage(key: "not a key", body: good.body, signature: good.signature)), "malformed"),
                frame(host, signed(presence, by: hostKey, as: host), "malformed"),
                frame(host, signed(seek, by: hostKey, as: host), "accepted"),
                frame(host, signed(play, by: hostKey, as: host), "replay"),
            ]),
            Trace(name: "a grant, then a revocation: the member's commands count between them only", frames: [
                frame(aliceID, signed(play, by: alice, as: aliceID), "noControl"),
                frame(controlRun, .role(grant), "accepted"),
                frame(aliceID, signed(seek, by: alice, as: aliceID), "accepted"),
                frame(controlRun, .role(grant), "stale"),
                frame(controlRun, .role(revoke), "accepted"),
                frame(aliceID, signed(edit, by: alice, as: aliceID), "noControl"),
                frame(controlRun, .role(grant), "stale"),
            ]),
            Trace(name: "statements the host key did not sign, or about the host key, do not count", frames: [
                frame(malloryID, .role(statement(.grant, mallory.publicKey, "mallory", at: t0, by: mallory)), "badSignature"),
                frame(malloryID, .role(statement(.grant, mallory.publicKey, "mallory", at: t0, in: otherSession)), "badSignature"),
                frame(controlRun, .role(statement(.revoke, hostKey.publicKey, "host", at: t0)), "malformed"),
                frame(controlRun, .role(statement(.grant, alice.publicKey, "", at: t0)), "malformed"),
                frame(malloryID, signed(pause, by: mallory, as: malloryID), "noControl"),
                frame(malloryID, pause, "unsigned"),
            ]),
            Trace(name: "statements reordered: the newer one stands", frames: [
                frame(controlRun, .role(revoke), "accepted"),
                frame(controlRun, .role(grant), "stale"),
                frame(aliceID, signed(seek, by: alice, as: aliceID), "noControl"),
            ]),
            Trace(name: "commands reordered: an older one than the last counted does not count", frames: [
                frame(host, signed(seek, by: hostKey, as: host), "accepted"),
                frame(host, signed(play, by: hostKey, as: host), "replay"),
                frame(host, signed(edit, by: hostKey, as: host), "accepted"),
            ]),
            Trace(name: "a transition at an entry's end needs no authority: unsigned, it passes marked (the coordinator applies only the one it computes itself); no other state does", frames: [
                frame(malloryID, advance("e1"), "transition"),
                frame(aliceID, advance("e1"), "transition"),
                frame(malloryID, advance(nil), "unsigned"),
                frame(host, signed(advance("e1"), by: hostKey, as: host), "accepted"),
                frame(malloryID, signed(advance("e1"), by: mallory, as: malloryID), "noControl"),
            ]),
            Trace(name: "the parts of one queue copy share their sentAt: each counts once", frames: [
                frame(host, signed(snapshot(0), by: hostKey, as: host), "accepted"),
                frame(host, signed(snapshot(1), by: hostKey, as: host), "accepted"),
                frame(host, signed(snapshot(0), by: hostKey, as: host), "replay"),
            ]),
        ]
    }

    static func make() throws -> Vector {
        let grant = statement(.grant, alice.publicKey, "alice", at: t0 + 500_000_000)
        let revoke = statement(.revoke, alice.publicKey, "alice", at: t0 + 2_500_000_000)
        let statements = try [("grant alice", grant), ("revoke alice", revoke)].map { name, statement in
            Signed(
                name: name, body: try json(MemberMessage.role(statement)), canonical: hex(statement.canonicalBytes(session: session)),
                signature: base64url(statement.signature))
        }
        let commands = try [
            ("the host pauses", state(.pause, rate: 0, at: 12.5, sentAt: t0), hostKey, host),
            ("alice seeks", state(.seek, rate: 1, at: 30, sentAt: t0 + 2_000_000_000), alice, aliceID),
        ].map { name, message, key, participant in
            let signed = try RoleBook.sign(message, with: key, session: session, participant: participant)
            let body = Data(base64Encoded: signed.body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/").padding(toLength: (signed.body.count + 3) / 4 * 4, withPad: "=", startingAt: 0))!
            return Signed(
                name: name, body: try json(CoordinationMessage.signed(signed)),
                canonical: hex(RoleBook.signedBytes(session: session, participant: participant, body: Array(body))),
                signature: signed.signature, inner: String(decoding: body, as: UTF8.self), participant: participant.description)
        }
        return Vector(
            description: "Roles (docs/protocol.md, \"Roles: who may control\"), written by RoleVectorTests.swift, read by Tests/Web/roles.test.mjs. Seeds are Ed25519 seeds (base64url). statements: role member messages, canonical = the bytes the host key signs (hex). commands: signed coordination messages, inner = the signed body's text, canonical = the bytes the key signs. traces: each starts from a book with no statement; a frame's body is a member message (kind role) or a coordination message; expect is accepted, transition (an unsigned transition at an entry's end, passed marked as unauthenticated) or the reason it is ignored (unsigned, malformed, badSignature, noControl, replay, stale).",
            session: session.description, hostSeed: base64url(hostSeed), hostKey: hostKey.publicKey.text,
            members: memberSeeds.map { Member(name: $0.name, seed: base64url($0.seed), publicKey: try! MemberKey(seed: $0.seed).publicKey.text, participant: $0.participant.description) },
            statements: statements, commands: commands, traces: traces())
    }

    /// What a book does with one frame.
    static func outcome(_ frame: Frame, book: inout RoleBook) throws -> String {
        let data = Data(frame.body.utf8)
        let sender = ParticipantID(rawValue: UInt64(frame.participant, radix: 16)!)
        if case .role(let statement)? = try? JSONDecoder().decode(MemberMessage.self, from: data) {
            switch book.receive(statement) {
            case .success: return "accepted"
            case .failure(let reason): return reason.rawValue
            }
        }
        switch book.admit(try JSONDecoder().decode(CoordinationMessage.self, from: data), from: sender) {
        case .success(.state(let proposal)) where proposal.isUnauthenticated: return "transition"
        case .success: return "accepted"
        case .failure(let reason): return reason.rawValue
        }
    }

    @Test func sharedVectors() throws {
        let vector = try Self.make()
        guard let stored = try VectorFile.writeOrRead(vector, at: Self.file, writing: Self.writing) else { return }
        #expect(stored == vector, "the file differs from the Swift values' encoding; run with COPLAY_WRITE_VECTORS=1 after a deliberate change")
        for trace in stored.traces {
            var book = RoleBook(session: Self.session, hostKey: Self.hostKey.publicKey)
            for (index, frame) in trace.frames.enumerated() {
                #expect(try Self.outcome(frame, book: &book) == frame.expect, "\(trace.name), frame \(index)")
            }
            #expect(book.rejections.values.reduce(0, +) == trace.frames.filter { !["accepted", "transition"].contains($0.expect) }.count, "\(trace.name): every rejection counted")
        }
        for statement in stored.statements {
            guard case .role(let decoded) = try JSONDecoder().decode(MemberMessage.self, from: Data(statement.body.utf8)) else {
                Issue.record("\(statement.name) is no role statement")
                continue
            }
            #expect(hex(decoded.canonicalBytes(session: Self.session)) == statement.canonical)
            #expect(decoded.isValid(in: Self.session, hostKey: Self.hostKey.publicKey), "\(statement.name)")
        }
        // Every reason occurs in the traces.
        let reasons = Set(stored.traces.flatMap { $0.frames.map(\.expect) })
        #expect(reasons.isSuperset(of: RoleBook.Rejection.allCases.map(\.rawValue)), "missing: \(Set(RoleBook.Rejection.allCases.map(\.rawValue)).subtracting(reasons))")
    }
}
