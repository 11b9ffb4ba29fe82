import Foundation
import GroupSessions
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import SessionRelay
import Subprocess
import Testing
import TestSupport

/// Certificates made with the real openssl for the TLS tests.
struct TestCertificates {
    let directory: URL
    var caCertificate: String { directory.appendingPathComponent("ca.pem").path }
    var leafCertificate: String { directory.appendingPathComponent("leaf.pem").path }
    var leafKey: String { directory.appendingPathComponent("leaf.key").path }
    var selfSignedCertificate: String { directory.appendingPathComponent("self.pem").path }
    var selfSignedKey: String { directory.appendingPathComponent("self.key").path }

    /// A private CA, a leaf for 127.0.0.1/localhost it signed, and a self-signed certificate.
    static func make() async throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-certs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certs = TestCertificates(directory: directory)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        let san = "subjectAltName=IP:127.0.0.1,DNS:localhost"
        try await openssl(["req", "-x509"] + ec + ["-days", "2", "-subj", "/CN=coplay test CA",
                          "-keyout", directory.appendingPathComponent("ca.key").path, "-out", certs.caCertificate])
        try await openssl(["req"] + ec + ["-subj", "/CN=localhost", "-keyout", certs.leafKey,
                          "-out", directory.appendingPathComponent("leaf.csr").path])
        try "\(san)\n".write(to: directory.appendingPathComponent("san.ext"), atomically: true, encoding: .utf8)
        try await openssl(["x509", "-req", "-in", directory.appendingPathComponent("leaf.csr").path,
                           "-CA", certs.caCertificate, "-CAkey", directory.appendingPathComponent("ca.key").path,
                           "-CAcreateserial", "-days", "2", "-extfile", directory.appendingPathComponent("san.ext").path,
                           "-out", certs.leafCertificate])
        try await openssl(["req", "-x509"] + ec + ["-days", "2", "-subj", "/CN=localhost", "-addext", san,
                          "-keyout", certs.selfSignedKey, "-out", certs.selfSignedCertificate])
        return certs
    }

    static func openssl(_ arguments: [String]) async throws {
        let result = try await Subprocess.run(
            .path("/usr/bin/openssl"), arguments: Arguments(arguments), output: .discarded, error: .string(limit: 1 << 16))
        try #require(result.terminationStatus.isSuccess, "openssl \(arguments.first ?? ""): \(result.standardError)")
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

@Suite("TLS from every client: coplays:// invites, CA and key pins, mismatch messages", .timeLimit(.minutes(3)))
struct RelayTLSClientTests {
    func tlsRelay(certificate: String, key: String, _ body: (Int) async throws -> Void) async throws {
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.tls = try RelayConfiguration.tlsContext(certificatePath: certificate, keyPath: key)
        try await withRelay(configuration) { _, port in try await body(port) }
    }

    /// Two members meet over the relay the invite names; returns what the second received.
    func exchange(_ invite: Invite, tls: TLSConfiguration? = nil) async throws -> String? {
        let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: invite, tls: tls), logger: Logger(label: "test"))
        let a = try await center.activate(WatchMovie(movie: "m"), invite: invite)
        defer { a.leave() }
        try await a.join()
        let b = try await center.accept(invite)
        defer { b.leave() }
        let got = Collector(GroupSessionMessenger(session: b).messages(of: Chat.self))
        try await b.join()
        try GroupSessionMessenger(session: a).send(Chat(sender: 1, index: 1, text: "over tls"))
        await eventually("delivered") { got.count == 1 }
        return got.values.first?.0.text
    }

    func transportError(_ body: () async throws -> Void) async -> RelayTransportError? {
        do {
            try await body()
            return nil
        } catch let error as RelayTransportError {
            return error
        } catch {
            Issue.record("expected a RelayTransportError, got \(error)")
            return nil
        }
    }

    @Test("a coplays:// invite pinning a self-signed relay's key works; a wrong pin is refused by name")
    func pinnedSelfSigned() async throws {
        let certs = try await TestCertificates.make()
        defer { certs.remove() }
        let leaf = try #require(try NIOSSLCertificate.fromPEMFile(certs.selfSignedCertificate).first)
        let pin = try RelayTransport.keyPin(of: leaf)
        try await tlsRelay(certificate: certs.selfSignedCertificate, key: certs.selfSignedKey) { port in
            let invite = Invite.generate(host: "127.0.0.1", port: port, relayKeyPin: pin)
            #expect(invite.description.hasPrefix("coplays://127.0.0.1:\(port)/"))
            #expect(invite.description.contains("pin=\(Invite.keyPinText(pin))"))
            let parsed = try Invite(parsing: invite.description)
            let received = try await exchange(parsed)
            #expect(received == "over tls")

            // Without the pin the system trust store does not know a self-signed certificate.
            let unpinned = Invite.generate(host: "127.0.0.1", port: port, usesTLS: true)
            let rejected = await transportError {
                _ = try await GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: unpinned), logger: Logger(label: "test")).accept(unpinned)
            }
            #expect(rejected?.code == .certificateRejected)
            #expect(rejected?.description.contains("--ca FILE") == true)

            var wrong = pin
            wrong[0] ^= 1
            let impostor = Invite.generate(host: "127.0.0.1", port: port, relayKeyPin: wrong)
            let mismatch = await transportError {
                _ = try await GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: impostor), logger: Logger(label: "test")).accept(impostor)
            }
            #expect(mismatch?.code == .pinMismatch)
            #expect(mismatch?.description.contains(Invite.keyPinText(pin)) == true, "names the key presented")
        }
    }

    @Test("a relay certificate from a private CA is verified with that CA (--ca), refused without it")
    func privateCA() async throws {
        let certs = try await TestCertificates.make()
        defer { certs.remove() }
        try await tlsRelay(certificate: certs.leafCertificate, key: certs.leafKey) { port in
            let invite = Invite.generate(host: "127.0.0.1", port: port, usesTLS: true)
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certs.caCertificate))
            let received = try await exchange(invite, tls: tls)
            #expect(received == "over tls")
            let refused = await transportError {
                _ = try await GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: invite), logger: Logger(label: "test")).accept(invite)
            }
            #expect(refused?.code == .certificateRejected)
        }
    }

    @Test("a plain client at a TLS relay, and a TLS client at a plain relay, are told which side speaks what")
    func mismatches() async throws {
        let certs = try await TestCertificates.make()
        defer { certs.remove() }
        try await tlsRelay(certificate: certs.selfSignedCertificate, key: certs.selfSignedKey) { port in
            let plain = Invite.generate(host: "127.0.0.1", port: port)
            let error = await transportError {
                _ = try await GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: plain), logger: Logger(label: "test")).accept(plain)
            }
            #expect(error?.code == .relaySpeaksTLS)
            #expect(error?.description.contains("coplays://") == true)
        }
        try await withRelay { _, port in
            let secure = Invite.generate(host: "127.0.0.1", port: port, usesTLS: true)
            let error = await transportError {
                _ = try await GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: secure), logger: Logger(label: "test")).accept(secure)
            }
            #expect(error?.code == .relayIsPlain)
        }
    }

    @Test("invites: coplays:// and pins round-trip; bad pins and pins on plain invites are errors")
    func inviteForms() throws {
        let pin = [UInt8](repeating: 0xAB, count: 32)
        let invite = Invite.generate(host: "relay.example", port: 443, suite: .aes256GCM, relayKeyPin: pin)
        #expect(invite.usesTLS)
        #expect(try Invite(parsing: invite.description) == invite)
        #expect(invite.webPageURL().hasPrefix("https://relay.example:443/#invite=coplays%3A%2F%2F"))
        let secret = invite.description.split(separator: "#")[1]
        #expect(throws: InviteError.self) { try Invite(parsing: "coplays://h:1/\(invite.session)?pin=short#\(secret)") }
        #expect(throws: InviteError.self) {
            try Invite(parsing: "coplay://h:1/\(invite.session)?pin=\(Invite.keyPinText(pin))#\(secret)")
        }
        let upper = try Invite(parsing: "COPLAYS://h:1/\(invite.session)#\(secret)")
        #expect(upper.usesTLS)
    }
}

@Suite("A TLS relay serves the page over https", .timeLimit(.minutes(2)))
struct RelayHTTPSTests {
    @Test("GET / over TLS (https) answers the page, cross-origin isolated")
    func httpsPage() async throws {
        let certs = try await TestCertificates.make()
        defer { certs.remove() }
        let pages = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-https-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: pages, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: pages) }
        try Data("<!doctype html><title>coplay over https</title>".utf8).write(to: pages.appendingPathComponent("index.html"))
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.tls = try RelayConfiguration.tlsContext(certificatePath: certs.leafCertificate, keyPath: certs.leafKey)
        configuration.webClient = try WebClientFiles(directory: pages.path)
        try await withRelay(configuration) { _, port in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certs.caCertificate))
            let response = try await HTTPSClient.get(port: port, path: "/", tls: tls)
            #expect(response.hasPrefix("HTTP/1.1 200 OK"))
            #expect(response.contains("Cross-Origin-Embedder-Policy: require-corp"))
            #expect(response.contains("<title>coplay over https</title>"))
        }
    }
}

/// One HTTP/1.1 GET over TLS with swift-nio-ssl (tests only).
enum HTTPSClient {
    static func get(port: Int, path: String, tls: TLSConfiguration) async throws -> String {
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"))
            var text = ""
            do {
                for try await chunk in inbound { text += String(buffer: chunk) }
            } catch {
                // The server's close without close_notify after Connection: close ends the read.
            }
            return text
        }
    }
}
