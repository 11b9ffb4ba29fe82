import Foundation
import GroupChat
import GroupSessions
import Testing
import TestSupport

/// The shared removal vectors `Tests/Vectors/removal/removal.json` (docs/protocol.md, "Removing a
/// member"), written here and read by `Tests/Web/removal.test.mjs`: keys from fixed seeds, the
/// members' `sealingKey` statements with the bytes signed, and `traces`: removals as one member
/// receives them, each with what the member does (`removed`, `moved` with the opened invite,
/// `leftBehind`, or the reason it ignores it: `noHostKey`, `badSignature`, `repeated`).
///
/// HPKE seals with a fresh ephemeral key each time, so the removals differ at every write: the
/// deterministic part (keys, statements, signed bytes) must equal what this build computes, and the
/// stored removals must verify and open here as the traces say (so a box Swift sealed is what the page
/// opens). After a deliberate change: `COPLAY_WRITE_VECTORS=1 swift test --filter RemovalVectorTests`.
@Suite struct RemovalVectorTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/removal/removal.json")
    static var writing: Bool { ProcessInfo.processInfo.environment["COPLAY_WRITE_VECTORS"] == "1" }

    static let session = SessionID(hex: "0123456789abcdef0123456789abcdef")!
    static let otherSession = SessionID(hex: "fedcba9876543210fedcba9876543210")!
    static let hostKey = try! MemberKey(seed: Array(101...132))
    static let remover = ParticipantID(rawValue: 0x0000_0000_0000_00c2)
    static let t0: UInt64 = 1_790_000_000_950_000_000

    /// alice holds the controller invite, carol the viewer invite, bob is removed, dave announced no sealing key.
    static let memberSeeds: [(name: String, seed: [UInt8], sealing: [UInt8], controller: Bool)] = [
        ("alice", Array(1...32), Array(33...64), true),
        ("bob", Array(65...96), Array(133...164), false),
        ("carol", Array(165...196), Array(197...228), false),
        ("dave", Array(11...42), Array(43...74), false),
    ]
    static func key(_ name: String) -> MemberKey { try! MemberKey(seed: memberSeeds.first { $0.name == name }!.seed) }
    static func sealing(_ name: String) -> SealingKey { try! SealingKey(rawRepresentation: memberSeeds.first { $0.name == name }!.sealing) }

    static let successor = try! Invite(parsing:
        "coplay://127.0.0.1:7000/00112233445566778899aabbccddeeff?aead=aes-256-gcm&host=\(try! MemberKey(seed: Array(2...33)).publicKey.text)"
        + "#\(base64url(Array(repeating: 7, count: 32))).\(base64url(Array(2...33)))")

    struct Vector: Codable, Equatable {
        var description: String
        var session: String
        var hostSeed: String
        var hostKey: String
        var members: [Member]
        var sealingKeys: [Statement]
        var invites: Invites
        var traces: [Trace]

        /// Everything but the traces' sealed removals (fresh each write).
        var deterministic: Vector {
            var copy = self
            copy.traces = traces.map { Trace(name: $0.name, member: $0.member, hostKey: $0.hostKey, frames: $0.frames.map { Frame(body: "", canonical: "", expect: $0.expect) }) }
            return copy
        }
    }

    struct Member: Codable, Equatable {
        var name: String
        var seed: String
        var publicKey: String
        /// The X25519 private key's 32 bytes and its public key (base64url).
        var sealingPrivate: String
        var sealingKey: String
    }

    /// A `sealingKey` member message: its JSON, the bytes the member key signs and (for a
    /// controller) the bytes the host key signs (hex).
    struct Statement: Codable, Equatable {
        var name: String
        var body: String
        var canonical: String
        var controllerCanonical: String?
    }

    struct Invites: Codable, Equatable {
        var controller: String
        var viewer: String
    }

    /// Removals as `member` receives them, in order, in the session (with its host key unless `hostKey` is false).
    struct Trace: Codable, Equatable {
        var name: String
        var member: String
        var hostKey: Bool
        var frames: [Frame]
    }

    /// A removal (its JSON and the bytes the host key signed, hex) and the outcome:
    /// `removed`, `moved <invite>`, `leftBehind`, or a rejection reason.
    struct Frame: Codable, Equatable {
        var body: String
        var canonical: String
        var expect: String
    }




    static func recipient(_ name: String) -> Removal.Recipient {
        let controller = memberSeeds.first { $0.name == name }!.controller
        return Removal.Recipient(
            key: key(name).publicKey, sealingKey: sealing(name).publicKey, invite: controller ? successor.description : successor.viewer.description)
    }

    static func removal(
        of name: String = "bob", for recipients: [String] = ["alice", "carol"], named removedName: String = "bob", at issuedAt: UInt64 = t0,
        in session: SessionID = session, by signer: MemberKey = hostKey
    ) -> Removal {
        try! Removal(
            signedBy: signer, session: session, removed: key(name).publicKey, removedName: removedName, issuedAt: issuedAt,
            recipients: recipients.map(recipient))
    }

    /// `removal` with `change` applied and signed again by the host key (a host's malformed removal).
    static func resigned(_ removal: Removal, _ change: (inout Removal) -> Void) -> Removal {
        var copy = removal
        change(&copy)
        copy.signature = try! hostKey.signature(for: copy.canonicalBytes(session: session))
        return copy
    }

    static func frame(_ removal: Removal, _ expect: String) -> Frame {
        Frame(body: try! json(MemberMessage.removal(removal)), canonical: hex(removal.canonicalBytes(session: session)), expect: expect)
    }

    static func traces() -> [Trace] {
        let valid = removal()
        let moved = { (name: String) in "moved \(recipient(name).invite)" }
        return [
            Trace(name: "a controller moves with the successor's controller invite; a second removal is ignored", member: "alice", hostKey: true, frames: [
                frame(valid, moved("alice")),
                frame(removal(of: "carol", for: ["alice"], named: "carol", at: t0 + 1), "repeated"),
            ]),
            Trace(name: "a viewer moves with the viewer invite", member: "carol", hostKey: true, frames: [frame(valid, moved("carol"))]),
            Trace(name: "the removed member stops", member: "bob", hostKey: true, frames: [frame(valid, "removed")]),
            Trace(name: "a member without a sealed invite is left behind", member: "dave", hostKey: true, frames: [frame(valid, "leftBehind")]),
            Trace(name: "removals the host key did not sign here, or altered, do not count; the valid one after them does", member: "alice", hostKey: true, frames: [
                frame(removal(by: key("carol")), "badSignature"),
                frame(removal(in: otherSession), "badSignature"),
                frame({ var altered = valid; altered.removedName = "carol"; return altered }(), "badSignature"),
                frame({ var altered = valid; altered.invites[0].box.ciphertext[0] ^= 1; return altered }(), "badSignature"),
                frame(resigned(valid) { $0.invites.append($0.invites[0]) }, "badSignature"),
                frame(resigned(valid) { $0.invites.append(removal(of: "alice", for: ["bob"]).invites[0]) }, "badSignature"),
                frame(valid, moved("alice")),
            ]),
            Trace(name: "a box that does not open (sealed to another key) leaves the member behind", member: "alice", hostKey: true, frames: [
                frame(resigned(valid) { $0.invites[0].box = $0.invites[1].box }, "leftBehind"),
            ]),
            Trace(name: "where everyone controls nobody removes anyone", member: "alice", hostKey: false, frames: [frame(valid, "noHostKey")]),
        ]
    }

    static func make() throws -> Vector {
        let statements = try memberSeeds.filter { $0.name != "dave" }.map { member in
            let statement = try SealingKeyStatement(
                signedBy: key(member.name), sealingKey: sealing(member.name).publicKey, session: session, hostKey: member.controller ? hostKey : nil)
            return Statement(
                name: member.name, body: try json(MemberMessage.sealingKey(statement)), canonical: hex(statement.canonicalBytes(session: session)),
                controllerCanonical: member.controller ? hex(statement.controllerBytes(session: session)) : nil)
        }
        return Vector(
            description: "Removing a member (docs/protocol.md, \"Removing a member\"), written by RemovalVectorTests.swift, read by Tests/Web/removal.test.mjs. Seeds are Ed25519 seeds, sealingPrivate X25519 private keys (base64url). sealingKeys: each member's sealingKey message, canonical = the bytes its member key signs, controllerCanonical = the bytes the host key signs (hex). traces: each starts from a member that has handled no removal; expect is removed, moved INVITE (the successor invite its box opens to), leftBehind, or why the removal is ignored (noHostKey, badSignature, repeated). The removals are sealed afresh at each write.",
            session: session.description, hostSeed: base64url(hostKey.seed), hostKey: hostKey.publicKey.text,
            members: memberSeeds.map {
                Member(name: $0.name, seed: base64url($0.seed), publicKey: key($0.name).publicKey.text, sealingPrivate: base64url($0.sealing), sealingKey: sealing($0.name).publicKey.text)
            },
            sealingKeys: statements, invites: Invites(controller: successor.description, viewer: successor.viewer.description), traces: traces())
    }

    /// What a member does with a removal (ChatChannel's checks, in its order).
    static func outcome(_ frame: Frame, member: String, hostKey: Bool, handled: inout Bool) throws -> String {
        guard case .removal(let removal) = try JSONDecoder().decode(MemberMessage.self, from: Data(frame.body.utf8)) else { return "not a removal" }
        guard hostKey else { return "noHostKey" }
        guard removal.isValid(in: session, hostKey: Self.hostKey.publicKey) else { return "badSignature" }
        guard !handled else { return "repeated" }
        handled = true
        if removal.removed == key(member).publicKey { return "removed" }
        guard let invite = try? removal.invite(for: key(member).publicKey, sealingKey: sealing(member), session: session) else { return "leftBehind" }
        return "moved \(invite)"
    }

    @Test func sharedVectors() throws {
        let vector = try Self.make()
        guard let stored = try VectorFile.writeOrRead(vector, at: Self.file, writing: Self.writing) else { return }
        #expect(stored.deterministic == vector.deterministic, "the file differs from the Swift values; run with COPLAY_WRITE_VECTORS=1 after a deliberate change")
        for trace in stored.traces {
            var handled = false
            for (index, frame) in trace.frames.enumerated() {
                #expect(try Self.outcome(frame, member: trace.member, hostKey: trace.hostKey, handled: &handled) == frame.expect, "\(trace.name), frame \(index)")
            }
        }
        for statement in stored.sealingKeys {
            guard case .sealingKey(let decoded) = try JSONDecoder().decode(MemberMessage.self, from: Data(statement.body.utf8)) else {
                Issue.record("\(statement.name) is no sealingKey statement")
                continue
            }
            #expect(decoded.isValid(in: Self.session))
            #expect(decoded.isController(in: Self.session, hostKey: Self.hostKey.publicKey) == (statement.controllerCanonical != nil))
        }
        let reasons = Set(stored.traces.flatMap { $0.frames.map { $0.expect.split(separator: " ").first.map(String.init) ?? "" } })
        #expect(reasons == ["moved", "removed", "leftBehind", "noHostKey", "badSignature", "repeated"])
    }
}
