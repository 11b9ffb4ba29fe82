import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay
import Testing
import TestSupport

/// A raw protocol client: speaks frames directly, as a malicious or buggy member would.
struct RawClient {
    let connection: any TransportConnection
    let received: Collector<Frame>
    let session: SessionID
    let id: ParticipantID

    static func connect(port: Int, invite: Invite, id: ParticipantID = .random(), join: Bool = true) async throws -> RawClient {
        let connection = try await RelayTransport(host: "127.0.0.1", port: port).connect(logger: Logger(label: "raw"))
        let client = RawClient(
            connection: connection, received: Collector(connection.inbound), session: invite.session, id: id)
        try connection.send(
            Frame(type: .hello, session: invite.session, sender: id,
                  payload: HelloPayload(token: SessionKeys(invite: invite).joinToken).encoded()))
        if join { try connection.send(Frame(type: .join, session: invite.session, sender: id)) }
        await eventually("raw client admitted") { client.received.values.contains { $0.type == .welcome } }
        return client
    }

    func errors() -> [ErrorPayload] {
        received.values.filter { $0.type == .error }.compactMap { try? ErrorPayload(decoding: $0.payload) }
    }

    /// All bytes received, as they were on the wire.
    func wireBytes() -> [UInt8] {
        var buffer = ByteBuffer()
        for frame in received.values { FrameCodec.encode(frame, into: &buffer) }
        return Array(buffer.readableBytesView)
    }
}

@Suite("Relay security and limits (TCP on loopback)", .timeLimit(.minutes(10)))
struct RelaySecurityTests {
    @Test("a canary plaintext never appears in the relay's logs or in the bytes it forwards")
    func canary() async throws {
        let records = LockedBox<[String]>([])
        let logger = Logger(label: "relay") { _ in CapturingLogHandler(records: records) }
        let canary = "CANARY-7f3a9c-\(UUID().uuidString)"
        try await withRelay(logger: logger) { _, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: canary), invite: invite)
            try await a.join()
            let spy = try await RawClient.connect(port: port, invite: invite)
            let b = try await center.accept(invite)
            let got = Collector(GroupSessionMessenger(session: b).messages(of: Chat.self))
            let raw = Collector(GroupSessionMessenger(session: b).messages(of: Data.self))
            try await b.join()
            await eventually("b joined") { a.activeParticipants.count == 3 }
            let messenger = GroupSessionMessenger(session: a)
            try messenger.send(Chat(sender: 0, index: 1, text: canary))
            try messenger.send(Data(canary.utf8))
            try messenger.send(Chat(sender: 0, index: 2, text: canary), retainedAs: canary)
            try a.setActivity(WatchMovie(movie: canary + "-2"))
            await eventually("b got everything") { got.count == 2 && raw.count == 1 && b.activity.movie == canary + "-2" }
            #expect(got.values.first?.0.text == canary)
            await eventually("spy saw the forwarded frames") {
                spy.received.values.filter { $0.type == .data }.count >= 4
            }
            let needle = Array(canary.utf8)
            #expect(!spy.wireBytes().contains(subsequence: needle))
            let secretText = invite.description.split(separator: "#")[1]
            for record in records.value {
                #expect(!record.contains(canary))
                #expect(!record.contains(secretText))
            }
            #expect(!records.value.isEmpty)
        }
    }

    @Test("a wrong secret cannot join; the members are not affected")
    func wrongSecret() async throws {
        try await withRelay { _, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "m"), invite: invite)
            try await a.join()
            var wrong = invite
            wrong.secret[0] ^= 0x80
            do {
                _ = try await center.accept(wrong)
                Issue.record("joined with a wrong secret")
            } catch let error as GroupSessionError {
                #expect(error.relayCode == .unauthorized)
            }
            #expect(a.state == .joined)
            #expect(a.activeParticipants.count == 1)
        }
    }

    @Test("tampered, forged and replayed frames are rejected and never delivered")
    func tamperAndReplay() async throws {
        try await withRelay { relay, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "m"), invite: invite)
            try await a.join()
            let b = try await center.accept(invite)
            let got = Collector(GroupSessionMessenger(session: b).messages(of: Chat.self))
            try await b.join()
            let spy = try await RawClient.connect(port: port, invite: invite)
            await eventually("all joined") { b.activeParticipants.count == 3 }
            let messenger = GroupSessionMessenger(session: a)
            for index in 0..<3 { try messenger.send(Chat(sender: 0, index: index)) }
            await eventually("b got 3") { got.count == 3 }
            let live = { spy.received.values.filter { $0.type == .data && !$0.flags.contains(.replayed) } }
            await eventually("spy captured 3") { live().count == 3 }
            let captured = live()

            // 1. Tampered: a captured frame with one ciphertext bit flipped, sent by the spy.
            var tampered = captured[2]
            var bytes = Array(tampered.payload.readableBytesView)
            bytes[bytes.count - 20] ^= 1
            tampered.payload = ByteBuffer(bytes: bytes)
            try spy.connection.send(tampered)
            // 2. Forged: sealed under a key derived from another secret.
            var forger = PayloadCipher(keys: SessionKeys(secret: Array(repeating: 7, count: 32), session: invite.session))
            try spy.connection.send(
                try forger.seal(Array("{\"sender\":9,\"index\":9,\"text\":\"\"}".utf8), route: DataRoute(senderSequence: 100),
                                flags: [], sender: spy.id))
            await eventually("b rejected two") { b.rejectedFrameCount == 2 }

            // 3. Replay: a captures a's frames, a leaves, the spy takes a's identity and replays them.
            // The relay remembers the sender sequences it stamped for a (resume deduplication), so it
            // drops them; replayed from another member's connection they reach b, which rejects them.
            let aID = a.localParticipant.id
            a.leave()
            await eventually("a gone") { b.activeParticipants.count == 2 }
            let impostor = try await RawClient.connect(port: port, invite: invite, id: aID)
            for frame in captured { try impostor.connection.send(frame) }
            await eventually("the relay dropped the replays") { relay.metrics.counters.duplicatesDropped == 3 }
            let replayer = try await RawClient.connect(port: port, invite: invite)
            for frame in captured { try replayer.connection.send(frame) }
            await eventually("b rejected the replays") { b.rejectedFrameCount == 5 }
            // Nothing beyond the three genuine messages was delivered.
            try await Task.sleep(for: .milliseconds(200))
            #expect(got.values.map(\.0.index) == [0, 1, 2])
        }
    }

    @Test("oversized messages and frames get clear errors; only the offender is affected")
    func oversized() async throws {
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.maximumFrameLength = 512 * 1024
        try await withRelay(configuration) { _, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "m"), invite: invite)
            try await a.join()
            let b = try await center.accept(invite)
            let got = Collector(GroupSessionMessenger(session: b).messages(of: Data.self))
            try await b.join()
            let messenger = GroupSessionMessenger(session: a)
            do {
                try messenger.send(Data(count: 256 * 1024 + 1))
                Issue.record("sent an oversized message")
            } catch let error as GroupSessionError {
                #expect(error.isSameKind(as: .messageTooLarge(size: 0, limit: 0)))
                #expect(error.description.contains("262144"))
            }
            try messenger.send(Data(count: 256 * 1024))  // exactly at the limit: allowed

            // A raw member sends a data payload above the relay's payload limit: refused, stays connected.
            let spy = try await RawClient.connect(port: port, invite: invite)
            var big = ByteBuffer()
            DataRoute(senderSequence: 1).encode(into: &big)
            big.writeRepeatingByte(0, count: 400 * 1024)
            try spy.connection.send(Frame(type: .data, session: invite.session, sender: spy.id, payload: big))
            await eventually("spy refused") { spy.errors().contains { $0.code == .frameTooLarge } }
            // Then a frame above the framing limit: refused and closed.
            var huge = ByteBuffer()
            DataRoute(senderSequence: 2).encode(into: &huge)
            huge.writeRepeatingByte(0, count: 600 * 1024)
            try spy.connection.send(Frame(type: .data, session: invite.session, sender: spy.id, payload: huge))
            await eventually("spy refused twice") { spy.errors().filter { $0.code == .frameTooLarge }.count == 2 }

            try messenger.send(Data("after".utf8))
            await eventually("b got both legit messages") { got.count == 2 }
            #expect(got.values.map(\.0.count) == [256 * 1024, 5])
            #expect(a.state == .joined && b.state == .joined)
        }
    }

    @Test("flooding senders get rate-limit errors; the others lose nothing")
    func flooding() async throws {
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.limits.ratePerSecond = 100
        configuration.limits.burst = 200
        try await withRelay(configuration) { relay, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let flooder = try await center.activate(WatchMovie(movie: "m"), invite: invite)
            try await flooder.join()
            let calm = try await center.accept(invite)
            try await calm.join()
            let listener = try await center.accept(invite)
            let got = Collector(GroupSessionMessenger(session: listener).messages(of: Chat.self))
            try await listener.join()
            let rawFlooder = try await RawClient.connect(port: port, invite: invite)
            await eventually("all joined") { listener.activeParticipants.count == 4 }

            // The client-side check: a tight loop of 1,000 sends; the excess throws rateLimited.
            let floodMessenger = GroupSessionMessenger(session: flooder)
            var accepted: [Int] = []
            var refused = 0
            for index in 0..<1_000 {
                do {
                    try floodMessenger.send(Chat(sender: 0, index: index))
                    accepted.append(index)
                } catch let error as GroupSessionError {
                    #expect(error.isSameKind(as: .rateLimited(ratePerSecond: 0, burst: 0)))
                    refused += 1
                }
            }
            #expect(refused > 0 && accepted.count >= 160)  // 80% of the relay's burst of 200

            // The relay-side check: a raw client ignoring the limit gets error frames.
            var route = ByteBuffer()
            for sequence in 1...1_000 {
                route.clear()
                DataRoute(senderSequence: UInt64(sequence)).encode(into: &route)
                route.writeRepeatingByte(0, count: 16)
                try rawFlooder.connection.send(Frame(type: .data, session: invite.session, sender: rawFlooder.id, payload: route))
            }
            await eventually("raw flooder refused") { rawFlooder.errors().contains { $0.code == .rateLimited } }

            // Meanwhile a calm member sends within its limit, paced.
            let calmMessenger = GroupSessionMessenger(session: calm)
            for index in 0..<50 {
                try calmMessenger.send(Chat(sender: 1, index: index))
                try await Task.sleep(for: .milliseconds(15))
            }
            await eventually("listener has every accepted message") {
                got.values.filter { $0.0.sender == 0 }.count == accepted.count && got.values.filter { $0.0.sender == 1 }.count == 50
            }
            #expect(got.values.filter { $0.0.sender == 1 }.map(\.0.index) == Array(0..<50))
            #expect(got.values.filter { $0.0.sender == 0 }.map(\.0.index) == accepted)
            #expect(relay.metrics.counters.framesRefused > 0)
            #expect(calm.state == .joined && flooder.state == .joined)
        }
    }

    @Test("beyond the connection limit a connection gets an error frame and is closed")
    func connectionLimit() async throws {
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.limits.maximumConnections = 2
        try await withRelay(configuration) { _, port in
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let first = try await RawClient.connect(port: port, invite: invite)
            _ = try await RawClient.connect(port: port, invite: invite)
            let connection = try await RelayTransport(host: "127.0.0.1", port: port).connect(logger: Logger(label: "x"))
            // The relay learns what a connection speaks from its first bytes (relay frames, HTTP or a
            // WebSocket on one port), so the refusal answers the first frame, as a real member's hello.
            try connection.send(Frame(type: .ping, session: invite.session, sender: ParticipantID(rawValue: 3)))
            var frames: [Frame] = []
            for try await frame in connection.inbound { frames.append(frame) }  // ends when the relay closes
            #expect(frames.count == 1)
            #expect(try frames.first.map { try ErrorPayload(decoding: $0.payload).code } == .tooManyConnections)
            #expect(first.errors().isEmpty)
        }
    }
}
