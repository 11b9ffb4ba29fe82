import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay
import Synchronization
import Testing
import TestSupport

/// Writes of held sessions wait until ``release()`` (no timing involved), as on a stuck disk. The
/// check "is this session held" and the registration of the waiting write happen under one lock,
/// and `release()` wakes every registered write, so a write racing the release is either let
/// through or woken: none is left waiting (a semaphore counted apart from the check could leave
/// one parked for good, and the relay's shutdown with it).
final class WriteGate: Sendable {
    private struct State {
        var held: Set<SessionID> = []
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    /// How many writes have waited at the gate so far.
    let blockedWrites = Atomic<Int>(0)

    func hold(_ session: SessionID) { state.withLock { _ = $0.held.insert(session) } }

    /// Lets every waiting and later write of held sessions through.
    func release() {
        let waiting = state.withLock { state in
            state.held.removeAll()
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns at once for a session that is not held; otherwise once released.
    func pass(_ session: SessionID) async {
        await withCheckedContinuation { continuation in
            let waits = state.withLock { state in
                guard state.held.contains(session) else { return false }
                state.waiting.append(continuation)
                return true
            }
            if waits { blockedWrites.add(1, ordering: .relaxed) } else { continuation.resume() }
        }
    }
}

/// A store whose writes for held sessions wait until released.
final class GatedStore: SessionPersistence {
    private let base: any SessionPersistence
    private let gate = WriteGate()
    var blockedWrites: Int { gate.blockedWrites.load(ordering: .relaxed) }

    init(base: any SessionPersistence) { self.base = base }

    func hold(_ session: SessionID) { gate.hold(session) }
    func release() { gate.release() }

    func commit(_ events: [SessionStoreEvent], of session: SessionID, lease: SessionLease?) async throws {
        for event in events { await gate.pass(event.session) }
        try await base.commit(events, of: session, lease: lease)
    }

    func needsCompaction(_ session: SessionID) -> Bool { base.needsCompaction(session) }
    func compact(_ snapshot: SessionSnapshot) async throws { try await base.compact(snapshot) }
    func load() async throws -> [SessionSnapshot] { try await base.load() }
}

/// Journal storage whose writes for held sessions block until released, and a session store
/// that hands it to the relay.
final class GatedJournalStore: SessionPersistence, JournalProviding {
    private let base: any SessionPersistence
    let journal: GatedJournal

    init(base: any SessionPersistence, journal: GatedJournal) {
        self.base = base
        self.journal = journal
    }

    var journalStorage: any JournalStorage { journal }
    func commit(_ events: [SessionStoreEvent], of session: SessionID, lease: SessionLease?) async throws {
        try await base.commit(events, of: session, lease: lease)
    }
    func needsCompaction(_ session: SessionID) -> Bool { base.needsCompaction(session) }
    func compact(_ snapshot: SessionSnapshot) async throws { try await base.compact(snapshot) }
    func load() async throws -> [SessionSnapshot] { try await base.load() }
}

final class GatedJournal: JournalStorage {
    private let base: JournalStore
    private let gate = WriteGate()
    var blockedWrites: Int { gate.blockedWrites.load(ordering: .relaxed) }

    init(base: JournalStore) { self.base = base }

    func hold(_ session: SessionID) { gate.hold(session) }
    func release() { gate.release() }
    private func write(_ session: SessionID) async { await gate.pass(session) }

    func attachments(in session: SessionID) async throws -> [StoredAttachment] { base.attachments(in: session) }
    func beginUpload(_ header: JournalHeader, in session: SessionID) async throws {
        await write(session)
        try await base.beginUpload(header, in: session)
    }
    func appendChunk(_ sealed: NIOCore.ByteBuffer, index: Int, of id: AttachmentID, in session: SessionID) async throws {
        await write(session)
        try await base.appendChunk(sealed, index: index, of: id, in: session)
    }
    func commitUpload(_ attachment: StoredAttachment, in session: SessionID) async throws {
        await write(session)
        try await base.commitUpload(attachment, in: session)
    }
    func discard(_ id: AttachmentID, in session: SessionID) async { await base.discard(id, in: session) }
    func chunks(_ range: Range<Int>, of id: AttachmentID, in session: SessionID) async throws -> [NIOCore.ByteBuffer] {
        try await base.chunks(range, of: id, in: session)
    }
    func deleteSession(_ session: SessionID) async { await base.deleteSession(session) }
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
            await eventually("the stuck session's write is blocked in the store") { store.blockedWrites >= 1 }

            try await Self.sendTwenty(from: sender, to: receiver, in: flowing)
            #expect(!stuckSender.received.values.contains { $0.type == .ack }, "acked before it was stored")
            #expect(!stuckReceiver.received.values.contains { $0.type == .data }, "forwarded before it was stored")

            store.release()
            await eventually("stored, then acked and forwarded") {
                stuckSender.received.values.contains { $0.type == .ack }
                    && stuckReceiver.received.values.contains { $0.type == .data }
            }
        }
    }

    /// Sends 20 data frames from `sender` in `session` and waits until `receiver` got them all and
    /// `sender` all their acks: the session that is not stuck keeps flowing.
    static func sendTwenty(from sender: RawClient, to receiver: RawClient, in session: Invite) async throws {
        for sequence in 1...20 {
            try sender.connection.send(
                Frame(type: .data, session: session.session, sender: sender.id, payload: route(senderSequence: UInt64(sequence))))
        }
        await eventually("the other session delivered and acked all 20") {
            receiver.received.values.filter { $0.type == .data }.count == 20
                && sender.received.values.filter { $0.type == .ack }.count == 20
        }
    }

    @Test("while one session's journal disk is stuck, another session's messages flow and the stuck upload's chunk is acknowledged only once written")
    func stuckJournalStallsOnlyItsSession() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-journal-isolation-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logger = Logger(label: "store")
        let journal = GatedJournal(base: try JournalStore(directory: directory.path, logger: logger))
        let store = GatedJournalStore(base: try SessionStore(directory: directory.path, logger: logger), journal: journal)
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.store = store
        try await withRelay(configuration) { _, port in
            let stuck = Invite.generate(host: "127.0.0.1", port: port)
            let flowing = Invite.generate(host: "127.0.0.1", port: port)
            let uploader = try await RawClient.connect(port: port, invite: stuck)
            let watcher = try await RawClient.connect(port: port, invite: stuck)
            let sender = try await RawClient.connect(port: port, invite: flowing)
            let receiver = try await RawClient.connect(port: port, invite: flowing)

            journal.hold(stuck.session)
            let header = JournalHeader(id: .random(), size: 1_000, chunkSize: 1_000, sealedMetadata: [])
            try uploader.connection.send(
                Frame(type: .journalPut, session: stuck.session, sender: uploader.id,
                      payload: JournalPutPayload(token: 1 << 63, header: header).encoded()))
            try uploader.connection.send(
                Frame(type: .journalChunk, session: stuck.session, sender: uploader.id,
                      payload: JournalChunkPayload(
                        id: header.id, index: 0, sealed: NIOCore.ByteBuffer(repeating: 9, count: header.sealedLength(ofChunk: 0))
                      ).encoded()))
            await eventually("the stuck session's journal write is blocked") { journal.blockedWrites >= 1 }

            try await Self.sendTwenty(from: sender, to: receiver, in: flowing)
            #expect(!uploader.received.values.contains { $0.type == .journalAck }, "acknowledged before it was written")
            #expect(!watcher.received.values.contains { $0.type == .journalAdded }, "announced before it was stored")

            journal.release()
            await eventually("written, then acknowledged and announced") {
                uploader.received.values.contains { $0.type == .journalAck }
                    && watcher.received.values.contains { $0.type == .journalAdded }
            }
            #expect(journal.blockedWrites >= 1)
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
