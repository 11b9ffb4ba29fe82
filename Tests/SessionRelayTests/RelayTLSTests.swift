import Foundation
import Logging
import GroupSessions
import NIOSSL
import SessionRelay
import Testing
import TestSupport

@Suite("Relay over TLS")
struct RelayTLSTests {
    @Test("members exchange messages through a TLS relay with an openssl-generated certificate")
    func tlsSession() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let cert = dir.appendingPathComponent("cert.pem").path
        let key = dir.appendingPathComponent("key.pem").path
        let openssl = await ChildProcess.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", key, "-out", cert,
        ])
        try #require(openssl.status == 0, "\(openssl.stderr)")

        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.tls = try RelayConfiguration.tlsContext(certificatePath: cert, keyPath: key)
        try await withRelay(configuration) { _, port in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(cert))
            let transport = RelayTransport(host: "127.0.0.1", port: port, tls: tls)
            let center = GroupActivityCenter<WatchMovie>(transport: transport, logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "tls"), invite: invite)
            try await a.join()
            let b = try await center.accept(invite)
            let got = Collector(GroupSessionMessenger(session: b).messages(of: Chat.self))
            try await b.join()
            try GroupSessionMessenger(session: a).send(Chat(sender: 1, index: 1, text: "over tls"))
            await eventually("b got it") { got.count == 1 }
            #expect(got.values.first?.0.text == "over tls")

            // A client that does not trust the certificate cannot connect.
            let untrusting = GroupActivityCenter<WatchMovie>(
                transport: RelayTransport(host: "127.0.0.1", port: port, tls: TLSConfiguration.makeClientConfiguration()), logger: Logger(label: "test"))
            await #expect(throws: (any Error).self) { _ = try await untrusting.accept(invite) }
        }
    }
}
