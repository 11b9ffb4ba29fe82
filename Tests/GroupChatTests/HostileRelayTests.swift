import Foundation
import GroupChat
import GroupSessions
import Logging
import NIOCore
import PlaybackCoordinator
import SessionRelay
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Roles against a hostile relay and a hostile member, over real sockets: the relay (in process)
/// sits behind a tampering proxy on the viewer's connection that re-sends, reorders and alters the
/// host's frames; a member holding the viewer invite replays the host's signed command as its own,
/// alters it, signs commands with its own key (no grant), sends them unsigned and forges a grant.
/// The viewer's coordinator receives the host's commands only, each at most once, as the host
/// sent them; every forgery is counted by the viewer's gate, by reason.
@Suite("Roles against a tampering relay and an ungranted signer", .serialized)
struct HostileRelayTests {
    static func state(_ command: CommandLabel, at seconds: Double, sentAt: Int64) -> CoordinationMessage {
        .state(StateProposal(
            state: PlaybackState(
                item: "clip", rate: command == .pause ? 0 : 1, anchorItemTime: seconds,
                anchorReferenceTime: ReferenceTime(nanoseconds: sentAt + 150_000_000), originator: "0000000000000000", duration: 600),
            command: command, sentAt: ReferenceTime(nanoseconds: sentAt)))
    }

    static func commands(_ events: [CoordinationChannelEvent]) -> [CoordinationMessage] {
        events.compactMap { event in
            guard case .message(let message, _, _) = event, RoleBook.isCommand(message) else { return nil }
            return message
        }
    }

    @Test("re-sent, reordered and altered frames and an ungranted signer change nothing", .timeLimit(.minutes(2)))
    func tamperingChangesNothing() async throws {
        let relay = RelayServer(configuration: RelayConfiguration(host: "127.0.0.1", port: 0), logger: Logger(label: "test.relay"))
        let relayTask = Task { try await relay.run() }
        defer { relayTask.cancel() }
        let relayPort = try await relay.boundPort()
        let proxy = try TamperingProxy(upstreamPort: relayPort)
        defer { proxy.stop() }

        let invite = Invite.generate(host: "127.0.0.1", port: relayPort).withNewHostKey()
        let hostCenter = GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: invite), logger: Logger(label: "test"))
        let hostSession = try await hostCenter.activate(WatchMovie(movie: "clip"), invite: invite)
        let hostGate = try #require(RoleGate(session: hostSession, invite: invite, memberKey: MemberKey()))
        try await hostSession.join()
        let hostChannel = GroupSessionCoordinationChannel(session: hostSession, gate: hostGate, logger: Logger(label: "test"))
        let hostEvents = Collector(hostChannel.events())

        // The viewer reaches the relay through the tampering proxy.
        var proxied = invite.viewer
        proxied.port = proxy.port
        let viewerSession = try await GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: proxied), logger: Logger(label: "test")).accept(proxied)
        let viewerGate = try #require(RoleGate(session: viewerSession, invite: proxied, memberKey: MemberKey()))
        try await viewerSession.join()
        let viewerChannel = GroupSessionCoordinationChannel(session: viewerSession, gate: viewerGate, logger: Logger(label: "test"))
        let viewerEvents = Collector(viewerChannel.events())

        // The hostile member: the viewer invite, its own key, straight to the relay.
        let mallorySession = try await GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: invite.viewer), logger: Logger(label: "test")).accept(invite.viewer)
        try await mallorySession.join()
        let mallory = GroupSessionMessenger(session: mallorySession)
        let malloryKey = MemberKey()
        let captured = Mutex<[SignedCoordinationMessage]>([])
        let capture = mallory.receive(CoordinationMessage.self) { message, _ in
            if case .signed(let signed) = message { captured.withLock { $0.append(signed) } }
        }
        defer {
            capture.cancel()
            for session in [hostSession, viewerSession, mallorySession] { session.leave() }
        }
        await eventually("everyone sees everyone", timeout: .seconds(10)) {
            hostSession.activeParticipants.count == 3 && viewerSession.activeParticipants.count == 3
        }
        proxy.tamper(sender: hostSession.localParticipant.id)

        // The host's genuine commands.
        let t0: Int64 = 1_790_000_000_000_000_000
        let genuine = (0..<6).map { Self.state($0.isMultiple(of: 2) ? .pause : .play, at: Double($0), sentAt: t0 + Int64($0) * 1_000_000_000) }
        for message in genuine {
            try await hostChannel.send(message, retainingUnder: CoordinationMessage.stateKey)
            try await Task.sleep(for: .milliseconds(30))
        }
        await eventually("mallory saw the host's commands", timeout: .seconds(10)) { captured.withLock { $0.count } == genuine.count }
        let first = try #require(captured.withLock { $0.first })

        // Mallory: the host's signed command as its own, altered, its own key, unsigned, a forged grant.
        let own = try RoleBook.sign(Self.state(.seek, at: 99, sentAt: t0 + 50_000_000_000), with: malloryKey, session: invite.session, participant: mallorySession.localParticipant.id)
        // Altered: another command under the host's key and signature.
        var altered = first
        altered.body = try RoleBook.sign(Self.state(.seek, at: 77, sentAt: t0 + 40_000_000_000), with: malloryKey, session: invite.session, participant: hostSession.localParticipant.id).body
        try mallory.send(CoordinationMessage.signed(first))
        try mallory.send(CoordinationMessage.signed(altered))
        try mallory.send(CoordinationMessage.signed(own))
        try mallory.send(Self.state(.seek, at: 77, sentAt: t0 + 60_000_000_000))
        let forged = try RoleStatement(
            signedBy: malloryKey, session: invite.session, action: .grant, key: malloryKey.publicKey, name: "mallory", issuedAt: UInt64(t0))
        try mallory.send(MemberMessage.role(forged), retainedAs: forged.retainName)
        try mallory.send(CoordinationMessage.signed(own))
        // The viewer's own command is refused before it is sent.
        await #expect(throws: PlaybackCoordinatorError.onlyHostsControl) {
            try await viewerChannel.send(Self.state(.pause, at: 1, sentAt: t0 + 80_000_000_000), retainingUnder: CoordinationMessage.stateKey)
        }
        // A command the host made earlier but sends later (its coordinator sends from two tasks)
        // still counts: its signer raises the sentAt to the last signed one.
        let late = Self.state(.pause, at: 3.5, sentAt: t0 - 1_000_000_000)
        try await hostChannel.send(late, retainingUnder: CoordinationMessage.stateKey)
        // The host's last command: once it is in, everything before it is too.
        let last = Self.state(.seek, at: 42, sentAt: t0 + 70_000_000_000)
        try await Task.sleep(for: .milliseconds(300))
        try await hostChannel.send(last, retainingUnder: CoordinationMessage.stateKey)
        try await hostChannel.send(.presence(PresenceReport(sentAt: ReferenceTime(nanoseconds: t0 + 71_000_000_000), observedDelay: .zero, preroll: .zero, item: "clip")), retainingUnder: nil)
        await eventually("the viewer received the host's last command", timeout: .seconds(10)) {
            Self.commands(viewerEvents.values).contains(last)
        }
        try await Task.sleep(for: .milliseconds(300))

        let received = Self.commands(viewerEvents.values)
        print("hostile relay test: proxy re-sent \(proxy.counts.resent), altered \(proxy.counts.altered), reordered \(proxy.counts.reordered) frames; the viewer took \(received.count) commands of the host's \(genuine.count + 2); its gate ignored \(viewerGate.rejections)")
        #expect(proxy.counts.resent > 0 && proxy.counts.altered > 0 && proxy.counts.reordered > 0, "the proxy did not tamper: \(proxy.counts)")
        guard case .state(var proposal) = late else { return }
        proposal.sentAt = ReferenceTime(nanoseconds: t0 + 5_000_000_000)  // the last genuine one's
        let raised = CoordinationMessage.state(proposal)
        #expect(received.allSatisfy { (genuine + [raised, last]).contains($0) }, "the viewer took a command the host did not send: \(received)")
        #expect(received.contains(raised), "the late-made command did not count")
        #expect(Set(received.map { "\($0)" }).count == received.count, "the viewer took a command twice")
        #expect(received.last == last)
        // Each of mallory's forgeries was seen by the gate and counted.
        let rejections = viewerGate.rejections
        #expect(rejections[.badSignature, default: 0] >= 3, "\(rejections)")  // the host's as its own, altered, the forged grant
        #expect(rejections[.noControl, default: 0] == 2, "\(rejections)")
        #expect(rejections[.unsigned, default: 0] == 1, "\(rejections)")
        #expect(!viewerGate.book.controls(malloryKey.publicKey))
        // The host (no proxy) judged mallory the same way, and took its own commands. Its copy of the
        // last one can come after the viewer's (a full parallel run saw it missing 300 ms later).
        await eventually("the host took its own last command", timeout: .seconds(10)) {
            Self.commands(hostEvents.values).contains(last)
        }
        #expect(Self.commands(hostEvents.values) == genuine + [raised, last])
        #expect(hostGate.rejections == [.badSignature: 3, .noControl: 2, .unsigned: 1], "\(hostGate.rejections)")
    }
}

/// A TCP proxy in front of the relay that tampers with the frames the relay sends down to the
/// member behind it: the data frames of one sender are re-sent, reordered (pairs swapped) and
/// altered (a copy with a flipped payload byte). Blocking sockets, a thread per direction.
final class TamperingProxy: Sendable {
    struct Counts: Sendable { var resent = 0, altered = 0, reordered = 0 }
    let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let state = Mutex<(target: ParticipantID?, counts: Counts, sockets: [Int32])>((nil, Counts(), []))

    init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    var counts: Counts { state.withLock { $0.counts } }

    /// From now on, tamper with `sender`'s data frames.
    func tamper(sender: ParticipantID) { state.withLock { $0.target = sender } }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for socket in state.withLock({ $0.sockets }) { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(upstreamPort).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(client)
                continue
            }
            state.withLock { $0.sockets += [client, upstream] }
            Thread { Self.pipe(from: client, to: upstream) }.start()
            Thread { [self] in down(from: upstream, to: client) }.start()
        }
    }

    private static func pipe(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0, writeAll(target, Array(buffer[0..<count])) else { break }
        }
        shutdown(target, Int32(SHUT_RDWR))
    }

    @discardableResult
    private static func writeAll(_ target: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(target, $0.baseAddress!, $0.count) }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    private static func bytes(_ frame: Frame) -> [UInt8] {
        var buffer = ByteBuffer()
        FrameCodec.encode(frame, into: &buffer)
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    /// The relay's frames to the member, tampered with.
    private func down(from source: Int32, to target: Int32) {
        var pending = ByteBuffer()
        var held: Frame?
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(source, &chunk, chunk.count)
            guard count > 0 else { break }
            pending.writeBytes(chunk[0..<count])
            while let frame = try? FrameCodec.decode(from: &pending) {
                let target_ = state.withLock { $0.target }
                guard frame.type == .data, let target_, frame.sender == target_ else {
                    Self.writeAll(target, Self.bytes(frame))
                    continue
                }
                if let earlier = held {
                    // Reordered: the later frame first, then the one held back.
                    Self.writeAll(target, Self.bytes(frame))
                    Self.writeAll(target, Self.bytes(earlier))
                    held = nil
                    state.withLock { $0.counts.reordered += 1 }
                    continue
                }
                // Re-sent, and an altered copy (a flipped payload byte), then held for reordering.
                Self.writeAll(target, Self.bytes(frame))
                Self.writeAll(target, Self.bytes(frame))
                var altered = frame
                var payload = frame.payload
                if payload.readableBytes > 0, let last = payload.getInteger(at: payload.writerIndex - 1, as: UInt8.self) {
                    payload.setInteger(last ^ 0x01, at: payload.writerIndex - 1)
                    altered.payload = payload
                    Self.writeAll(target, Self.bytes(altered))
                    state.withLock { $0.counts.altered += 1 }
                }
                state.withLock { $0.counts.resent += 1 }
                held = frame
            }
        }
        if let held { Self.writeAll(target, Self.bytes(held)) }
        shutdown(target, Int32(SHUT_RDWR))
    }
}
