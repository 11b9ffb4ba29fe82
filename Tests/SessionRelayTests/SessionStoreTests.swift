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
}
