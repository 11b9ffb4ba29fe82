import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay
import Testing

@Suite("SessionStore (relay --data-dir persistence)")
struct SessionStoreTests {
    let session = SessionID(high: 0xABCD, low: 0x1234)

    func data(_ sender: UInt64, seq: UInt64, stamp: UInt64, retain: [UInt8] = [], canary: [UInt8]) -> Frame {
        var payload = ByteBuffer()
        DataRoute(senderSequence: seq, retainKey: retain).encode(into: &payload)
        payload.writeBytes(canary)
        return Frame(type: .data, session: session, sender: ParticipantID(rawValue: sender), sequence: stamp, payload: payload)
    }

    @Test("events written, reloaded after reopening; 0700 directories, 0600 files; a torn last record is ignored; delete removes the directory")
    func roundTrip() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-store-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let hash = Array(repeating: UInt8(7), count: 32)
        let sealed = Array("sealed-bytes".utf8)
        do {
            let store = try SessionStore(directory: directory.path, logger: Logger(label: "test"))
            store.apply(.updated(SessionSnapshot(
                session: session, tokenHash: hash, sequence: 0, logFloor: 0,
                joined: [], senderHigh: [:])))
            store.apply(.logged(session, Frame(type: .joined, session: session, sender: ParticipantID(rawValue: 1), sequence: 1)))
            store.apply(.logged(session, Frame(type: .joined, session: session, sender: ParticipantID(rawValue: 2), sequence: 2)))
            store.apply(.logged(session, data(1, seq: 1, stamp: 3, retain: Array(repeating: 5, count: 16), canary: sealed)))
            store.apply(.logged(session, data(2, seq: 1, stamp: 4, canary: sealed)))
        }
        let sessionDirectory = directory.appendingPathComponent("sessions/\(session)")
        let framesPath = sessionDirectory.appendingPathComponent("frames").path
        // A record torn by a kill in the middle of a write.
        let handle = try #require(FileHandle(forWritingAtPath: framesPath))
        handle.seekToEndOfFile()
        handle.write(Data([0, 0, 0, 200, 1, 2, 3]))
        try handle.close()

        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? 0) & 0o777
        }
        #expect(try mode(directory.appendingPathComponent("sessions").path) == 0o700)
        #expect(try mode(sessionDirectory.path) == 0o700)
        #expect(try mode(framesPath) == 0o600)
        #expect(try mode(sessionDirectory.appendingPathComponent("state").path) == 0o600)

        let store = try SessionStore(directory: directory.path, logger: Logger(label: "test"))
        let snapshots = try await store.load()
        let snapshot = try #require(snapshots.first)
        #expect(snapshots.count == 1)
        #expect(snapshot.session == session)
        #expect(snapshot.tokenHash == hash)
        #expect(snapshot.joined.map(\.rawValue) == [1, 2])
        #expect(snapshot.log.map(\.sequence) == [1, 2, 3, 4])

        var hub = SessionHub<Int>(limits: HubLimits())
        hub.restore(snapshot, now: .zero)
        let restored = try #require(hub.snapshot(of: session))
        #expect(restored.sequence == 4)
        #expect(restored.retained.map(\.sequence) == [3])
        #expect(restored.senderHigh[ParticipantID(rawValue: 2)] == 1)

        // Compaction rewrites the file from the snapshot; reloading gives the same session.
        try await store.compact(restored)
        let again = try #require(try await SessionStore(directory: directory.path, logger: Logger(label: "test")).load().first)
        #expect(again.log.map(\.sequence) == [1, 2, 3, 4])
        #expect(again.retained.map(\.sequence) == [3])

        store.apply(.deleted(session))
        #expect(!FileManager.default.fileExists(atPath: sessionDirectory.path))
    }

    @Test("a group commit: each run of one session's records in one write, in order, across sessions and metadata; reloaded intact")
    func groupCommit() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-store-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let other = SessionID(high: 0x5678, low: 0x9ABC)
        let sealed = Array("sealed-bytes".utf8)
        func snapshot(_ id: SessionID) -> SessionSnapshot {
            SessionSnapshot(session: id, tokenHash: Array(repeating: 7, count: 32), sequence: 0, logFloor: 0, joined: [], senderHigh: [:])
        }
        func joined(_ id: SessionID, _ stamp: UInt64) -> SessionStoreEvent {
            .logged(id, Frame(type: .joined, session: id, sender: ParticipantID(rawValue: 1), sequence: stamp))
        }
        func otherData(stamp: UInt64) -> SessionStoreEvent {
            var payload = ByteBuffer()
            DataRoute(senderSequence: stamp, retainKey: []).encode(into: &payload)
            payload.writeBytes(sealed)
            return .logged(other, Frame(type: .data, session: other, sender: ParticipantID(rawValue: 1), sequence: stamp, payload: payload))
        }
        // One session's records in runs broken by another session's and by metadata, as a commit of
        // the relay never holds (one session per commit) but a store must still write in order.
        var events: [SessionStoreEvent] = [.updated(snapshot(session)), joined(session, 1), .updated(snapshot(other)), joined(other, 1)]
        events += (2...300).map { SessionStoreEvent.logged(session, data(1, seq: $0 - 1, stamp: $0, canary: sealed)) }
        events += (2...5).map { otherData(stamp: $0) }
        events += [joined(session, 301), .updated(snapshot(session))]
        events += (302...400).map { SessionStoreEvent.logged(session, data(1, seq: $0 - 2, stamp: $0, canary: sealed)) }
        let store = try SessionStore(directory: directory.path, logger: Logger(label: "test"))
        try await store.commit(events, of: session, lease: nil)
        try await store.commit([otherData(stamp: 6)], of: other, lease: nil)

        let loaded = try await SessionStore(directory: directory.path, logger: Logger(label: "test")).load()
        let mine = try #require(loaded.first { $0.session == session })
        let theirs = try #require(loaded.first { $0.session == other })
        #expect(loaded.count == 2)
        #expect(mine.log.map(\.sequence) == Array(1...400))
        #expect(mine.log.allSatisfy { $0.session == session })
        #expect(mine.log.filter { $0.type == .data }.allSatisfy { $0.payload.readableBytesView.suffix(sealed.count).elementsEqual(sealed) })
        #expect(theirs.log.map(\.sequence) == Array(1...6))
        #expect(theirs.log.allSatisfy { $0.session == other })
    }
}
