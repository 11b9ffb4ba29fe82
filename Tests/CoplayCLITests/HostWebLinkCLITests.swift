import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `coplay host` prints the browser link after the invite, and `coplay serve` serves the page it
/// points to (the browser itself is driven by Tests/Browser).
@Suite("coplay host: the browser link", .serialized)
struct HostWebLinkCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    @Test("line 2 is the page link for an AES-256-GCM invite; the relay serves that page; --cipher chacha20-poly1305 says browsers cannot join")
    func pageLink() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-link-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await PlaybackSessionCLITests.makeMedia(in: directory)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }

        let (_, port, host, invite) = try await PlaybackSessionCLITests.startRelayAndHost(media: [media], children: &children)
        #expect(invite.contains("?aead=aes-256-gcm#"))
        #expect(await host.out.wait(for: .seconds(30)) { $0.count >= 2 })
        let link = host.out.snapshot[1]
        let encoded = try #require(invite.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~"))))
        #expect(link == "http://127.0.0.1:\(port)/#invite=\(encoded)")

        // What a browser fetches for the link: the part before '#'.
        let (page, response) = try await URLSession.shared.data(from: URL(string: String(link.split(separator: "#")[0]))!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cross-Origin-Embedder-Policy") == "require-corp")
        #expect(String(decoding: page, as: UTF8.self).contains("<script type=\"module\""))

        let chacha = try await Child(["host", media, "--relay", "127.0.0.1:\(port)", "--cipher", "chacha20-poly1305", "--name", "c"])
        children.append(chacha)
        #expect(await chacha.out.wait(for: .seconds(30)) { $0.count >= 2 })
        #expect(!chacha.out.snapshot[0].contains("?aead="))
        #expect(chacha.out.snapshot[1].contains("browsers cannot join"))

        let bogus = try await CoplayProcess.run(["host", media, "--relay", "127.0.0.1:\(port)", "--cipher", "rot13"], timeout: 30)
        #expect(bogus.status != 0)
        #expect(bogus.stderr.contains("unknown --cipher rot13 (known: chacha20-poly1305, aes-256-gcm)"))
    }
}
