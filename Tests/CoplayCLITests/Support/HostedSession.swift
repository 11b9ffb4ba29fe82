import Foundation
import TestSupport
import Testing

/// The set-up every session test starts with: `coplay serve` on loopback, `coplay host MEDIA… --relay
/// 127.0.0.1:PORT` on it, and the invite the host prints. Every child is appended to the caller's
/// `children`, which the caller stops (`defer { for child in children.reversed() { child.stop() } }`).
extension PlaybackSessionCLITests {
    /// `coplay serve --listen 127.0.0.1:PORT ARGUMENTS` (port 0: the kernel picks a free one, with no
    /// window for another process to take it) appended to `children`; waits for its listening line
    /// and returns the relay and the port it listens on.
    static func startRelay(
        _ arguments: [String] = [], port: Int = 0, children: inout [Child]
    ) async throws -> (relay: Child, port: Int) {
        let relay = try await Child(["serve", "--listen", "127.0.0.1:\(port)"] + arguments)
        children.append(relay)
        let listening = await relay.process.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("coplay relay listening on") }
        let bound = try #require(CoplayProcess.port(in: listening), "the relay did not start: \(relay.err.snapshot.suffix(5))")
        return (relay, bound)
    }

    /// `coplay host MEDIA… --relay 127.0.0.1:PORT ARGUMENTS` appended to `children`; waits for the
    /// invite it prints first (a `coplay://` or, on a TLS relay, `coplays://` link to this relay) and
    /// returns the host and the invite.
    static func startHost(
        media: [String], relayPort port: Int, arguments: [String] = ["--name", "host"], children: inout [Child]
    ) async throws -> (host: Child, invite: String) {
        let host = try await Child(["host"] + media + ["--relay", "127.0.0.1:\(port)"] + arguments)
        children.append(host)
        #expect(await host.out.wait(for: .seconds(60)) { !$0.isEmpty }, "the host printed no invite: \(host.err.snapshot.suffix(8))")
        let invite = try #require(host.out.snapshot.first)
        #expect(invite.hasPrefix("coplay://127.0.0.1:\(port)/") || invite.hasPrefix("coplays://127.0.0.1:\(port)/"), "\(invite)")
        return (host, invite)
    }

    /// `coplay serve RELAY_ARGUMENTS` on a free loopback port and `coplay host MEDIA… HOST_ARGUMENTS` on it
    /// (see ``startRelay(_:port:children:)`` and ``startHost(media:relayPort:arguments:children:)``).
    static func startRelayAndHost(
        media: [String], hostArguments: [String] = ["--name", "host"], relayArguments: [String] = [], children: inout [Child]
    ) async throws -> (relay: Child, port: Int, host: Child, invite: String) {
        let (relay, port) = try await startRelay(relayArguments, children: &children)
        let (host, invite) = try await startHost(media: media, relayPort: port, arguments: hostArguments, children: &children)
        return (relay, port, host, invite)
    }
}
