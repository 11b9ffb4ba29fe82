import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay
import Synchronization
import Testing
import TestSupport

/// A store whose writes for held sessions block until released (no timing involved).
final class GatedStore: SessionPersistence {
    private let base: any SessionPersistence
    private let held = Mutex<Set<SessionID>>([])
    private let gate = DispatchSemaphore(value: 0)
    let blockedWrites = Atomic<Int>(0)

    init(base: any SessionPersistence) { self.base = base }

    func hold(_ session: SessionID) { held.withLock { _ = $0.insert(session) } }

    /// Lets every blocked and later write of held sessions through.
    func release() {
        let sessions = held.withLock { held in
            defer { held.removeAll() }
            return held
        }
        for _ in 0..<max(1, blockedWrites.load(ordering: .relaxed) + sessions.count) { gate.signal() }
    }

    func apply(_ event: SessionStoreEvent) {
        if held.withLock({ $0.contains(event.session) }) {
            blockedWrites.add(1, ordering: .relaxed)
            gate.wait()
        }
        base.apply(event)
    }

    func needsCompaction(_ session: SessionID) -> Bool { base.needsCompaction(session) }
    func compact(_ snapshot: SessionSnapshot) throws { try base.compact(snapshot) }
    func load() throws -> [SessionSnapshot] { try base.load() }
}

@Suite("Relay: sessions are isolated from each other's storage", .timeLimit(.minutes(3)))
struct SessionIsolationTests {
    @Test("while one session's store is stuck, another session's messages flow; the stuck session's frame is neither acked nor forwarded before it is stored")
    func stuckStoreStallsOnlyItsSession() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-isolation-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = GatedStore(base: try SessionStore(directory: directory.path, logger: Logger(label: "store")))
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.store = store
        try await withRelay(configuration) { _, port in
            let stuck = Invite.generate(host: "127.0.0.1", port: port)
            let flowing = Invite.generate(host: "127.0.0.1", port: port)
            let stuckSender = try await RawClient.connect(port: port, invite: stuck)
            let stuckReceiver = try await RawClient.connect(port: port, invite: stuck)
            let sender = try await RawClient.connect(port: port, invite: flowing)
            let receiver = try await RawClient.connect(port: port, invite: flowing)

            store.hold(stuck.session)
            try stuckSender.connection.send(
                Frame(type: .data, session: stuck.session, sender: stuckSender.id,
                      payload: Self.route(senderSequence: 1)))
            await eventually("the stuck session's write is blocked in the store") { store.blockedWrites.load(ordering: .relaxed) >= 1 }

            for sequence in 1...20 {
                try sender.connection.send(
                    Frame(type: .data, session: flowing.session, sender: sender.id, payload: Self.route(senderSequence: UInt64(sequence))))
            }
            await eventually("the other session delivered and acked all 20") {
                receiver.received.values.filter { $0.type == .data }.count == 20
                    && sender.received.values.filter { $0.type == .ack }.count == 20
            }
            #expect(!stuckSender.received.values.contains { $0.type == .ack }, "acked before it was stored")
            #expect(!stuckReceiver.received.values.contains { $0.type == .data }, "forwarded before it was stored")

            store.release()
            await eventually("stored, then acked and forwarded") {
                stuckSender.received.values.contains { $0.type == .ack }
                    && stuckReceiver.received.values.contains { $0.type == .data }
            }
        }
    }

    /// A data payload: a route with no recipients and no retain key, then 16 bytes standing in
    /// for a sealed box (the relay never opens it).
    static func route(senderSequence: UInt64) -> NIOCore.ByteBuffer {
        var buffer = NIOCore.ByteBuffer()
        DataRoute(senderSequence: senderSequence).encode(into: &buffer)
        buffer.writeBytes([UInt8](repeating: 7, count: 16))
        return buffer
    }
}
