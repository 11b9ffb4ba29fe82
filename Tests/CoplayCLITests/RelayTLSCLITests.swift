import Foundation
import NIOSSL
import Testing

/// `coplay serve --tls`, and `host`, `join` and `control` reaching it: a pinned self-signed relay,
/// a relay certified by a private CA (`--ca`), and the messages for the wrong kind of invite.
@Suite("coplay over a TLS relay", .serialized)
struct RelayTLSCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    static func openssl(_ arguments: [String]) async throws {
        let result = try await CoplayProcess.run(arguments, executable: URL(fileURLWithPath: "/usr/bin/openssl"), timeout: 60)
        try #require(result.status == 0, "openssl: \(result.stderr)")
    }

    @Test("a key pin that begins with a dash is --pin's value (base64url: one pin in 64 does), checked like any other")
    func pinBeginningWithADash() async throws {
        let malformed = try await CoplayProcess.run(["host", "clip.mp4", "--relay", "127.0.0.1:9", "--pin", "-abc"], timeout: 60)
        #expect(malformed.status != 0 && malformed.stderr.contains("--pin -abc is not a key pin"), "\(malformed.stderr)")
        let pin = "-" + String(repeating: "A", count: 42)
        let wellFormed = try await CoplayProcess.run(["host", "/nonexistent/clip.mp4", "--relay", "127.0.0.1:9", "--pin", pin], timeout: 60)
        #expect(wellFormed.status != 0 && !wellFormed.stderr.contains("Missing value") && !wellFormed.stderr.contains("not a key pin"), "\(wellFormed.stderr)")
    }

    @Test("host --pin with the key pin serve --tls prints: join and control work over TLS; a plain invite and a --ca run are explained", .timeLimit(.minutes(4)))
    func pinnedAndCA() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-tls-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await PlaybackSessionCLITests.makeMedia(in: directory)
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try await Self.openssl(["req", "-x509"] + ec + ["-days", "2", "-subj", "/CN=test CA", "-keyout", path("ca.key"), "-out", path("ca.pem")])
        try await Self.openssl(["req"] + ec + ["-subj", "/CN=localhost", "-keyout", path("relay.key"), "-out", path("relay.csr")])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: path("san.ext"), atomically: true, encoding: .utf8)
        try await Self.openssl(["x509", "-req", "-in", path("relay.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                                "-CAcreateserial", "-days", "2", "-extfile", path("san.ext"), "-out", path("relay.pem")])

        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (relay, port) = try await PlaybackSessionCLITests.startRelay(["--tls", path("relay.pem"), path("relay.key")], children: &children)
        let line = try #require(relay.out.snapshot.first { $0.contains("key pin") })
        let pin = String(try #require(line.split(separator: " ").last?.dropLast()))  // "...key pin PIN)"
        #expect(line.contains("https://") == false && line.contains("(TLS, key pin "))

        // Pinned: no CA needed anywhere.
        let (host, invite) = try await PlaybackSessionCLITests.startHost(
            media: [media], relayPort: port, arguments: ["--pin", pin, "--name", "host"], children: &children)
        #expect(await host.out.wait(for: .seconds(60)) { $0.count >= 2 }, "the host printed no web link: \(host.err.snapshot.suffix(8))")
        #expect(invite.hasPrefix("coplays://127.0.0.1:\(port)/") && invite.contains("pin=\(pin)"))
        #expect(host.out.snapshot[1].hasPrefix("https://127.0.0.1:\(port)/#invite=coplays%3A"))
        let joiner = try await Child(["join", invite, media, "--name", "p1", "--frames"])
        children.append(joiner)
        #expect(await joiner.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil })
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play over TLS failed: \(play.stderr)")
        #expect(await joiner.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.frames($0).count >= 10 })

        // The CA route: the same relay is verified with --ca; without it the certificate is refused by name.
        let unpinned = invite.replacingOccurrences(of: "pin=\(pin)", with: "").replacingOccurrences(of: "?&", with: "?")
            .replacingOccurrences(of: "?#", with: "#")
        let withCA = try await CoplayProcess.run(["control", unpinned, "pause", "--ca", path("ca.pem")], timeout: 60)
        #expect(withCA.status == 0, "control with --ca failed: \(withCA.stderr)")
        let withoutCA = try await CoplayProcess.run(["control", unpinned, "pause"], timeout: 60)
        #expect(withoutCA.status != 0)
        #expect(withoutCA.stderr.contains("failed verification") && withoutCA.stderr.contains("--ca FILE"), "\(withoutCA.stderr)")

        // A plain invite for the TLS relay: told so, not "wrong secret".
        let plain = unpinned.replacingOccurrences(of: "coplays://", with: "coplay://")
        let mismatch = try await CoplayProcess.run(["control", plain, "pause"], timeout: 60)
        #expect(mismatch.status != 0)
        #expect(mismatch.stderr.contains("speaks TLS but this invite is plain"), "\(mismatch.stderr)")
        #expect(!mismatch.stderr.contains("wrong secret"))
    }
}
