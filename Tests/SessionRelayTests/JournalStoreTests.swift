import Crypto
import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay
import Testing
import TestSupport

@Suite("JournalStore on disk")
struct JournalStoreTests {
    static let logger = Logger(label: "test.journal-store")

    static func header(size: Int, chunkSize: UInt32 = 1_000) -> JournalHeader {
        JournalHeader(id: .random(), size: UInt64(size), chunkSize: chunkSize, sealedMetadata: Array(repeating: 0xAB, count: 40))
    }

    static func chunk(_ header: JournalHeader, _ index: Int) -> ByteBuffer {
        ByteBuffer(bytes: Array(repeating: UInt8(truncatingIfNeeded: index), count: header.sealedLength(ofChunk: index)))
    }

    static func store(_ store: JournalStore, _ header: JournalHeader, in session: SessionID, sequence: UInt64) async throws {
        try await store.beginUpload(header, in: session)
        for index in 0..<header.chunkCount { try await store.appendChunk(chunk(header, index), index: index, of: header.id, in: session) }
        try await store.commitUpload(StoredAttachment(header: header, uploader: ParticipantID(rawValue: 5), sequence: sequence), in: session)
    }

    @Test("a store reopened from its files lists and serves the same attachments; incomplete uploads are dropped")
    func reopen() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = SessionID.random()
        let other = SessionID.random()
        let first = Self.header(size: 2_500)
        let second = Self.header(size: 0)
        let third = Self.header(size: 999)
        let partial = Self.header(size: 5_000)
        do {
            let store = try JournalStore(directory: directory, logger: Self.logger)
            try await Self.store(store, first, in: session, sequence: 4)
            try await Self.store(store, second, in: session, sequence: 9)
            try await Self.store(store, third, in: other, sequence: 2)
            try await store.beginUpload(partial, in: session)
            try await store.appendChunk(Self.chunk(partial, 0), index: 0, of: partial.id, in: session)
            #expect(store.storedBytes(in: session) == first.storedBytes + second.storedBytes)
        }
        let reopened = try JournalStore(directory: directory, logger: Self.logger)
        #expect(Set(reopened.sessions) == [session, other])
        #expect(reopened.attachments(in: session).map(\.header) == [first, second])
        #expect(reopened.attachments(in: session).map(\.sequence) == [4, 9])
        #expect(reopened.attachments(in: session).first?.uploader == ParticipantID(rawValue: 5))
        #expect(reopened.storedBytes(in: session) == first.storedBytes + second.storedBytes)
        #expect(try await reopened.chunks(0..<3, of: first.id, in: session) == (0..<3).map { Self.chunk(first, $0) })
        #expect(try await reopened.chunks(2..<3, of: first.id, in: session).first?.readableBytes == 500 + 16)
        await #expect(throws: (any Error).self) { try await reopened.chunks(0..<1, of: partial.id, in: session) }
        #expect(!FileManager.default.fileExists(atPath: "\(directory)/sessions/\(session)/journal/\(partial.id)"))

        await reopened.deleteSession(session)
        #expect(!FileManager.default.fileExists(atPath: "\(directory)/sessions/\(session)"))
        #expect(reopened.attachments(in: other).map(\.header) == [third])
        await reopened.discard(third.id, in: other)
        #expect(reopened.attachments(in: other).isEmpty)
        #expect(filesUnder(directory).isEmpty)
    }

    @Test("a relay started on a data directory announces the attachments found there")
    func relayReopens() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let invite = Invite.generate(host: "127.0.0.1", port: 1)
        let keys = SessionKeys(invite: invite)
        let uploader = ParticipantID(rawValue: 77)
        let cipher = JournalCipher(keys: keys, id: .random(), uploader: uploader)
        let content = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0) })
        // Written as a previous relay would have: sealed by a member, stored by the store.
        do {
            let store = try JournalStore(directory: directory, logger: Self.logger)
            var header = JournalHeader(id: cipher.id, size: 70_000, chunkSize: 65_536, sealedMetadata: [])
            header.sealedMetadata = try cipher.sealMetadata(
                AttachmentMetadata(size: 70_000, chunkSize: 65_536, digest: Self.sha256(content), label: "kept"))
            try await store.beginUpload(header, in: invite.session)
            for index in 0..<2 {
                let range = index * 65_536..<min(70_000, (index + 1) * 65_536)
                try await store.appendChunk(
                    cipher.sealChunk(content[range], index: index, size: 70_000, chunkSize: 65_536), index: index,
                    of: header.id, in: invite.session)
            }
            try await store.commitUpload(StoredAttachment(header: header, uploader: uploader, sequence: 1), in: invite.session)
        }
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory
        try await withRelay(configuration) { _, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let session = try await center.activate(
                WatchMovie(movie: "again"), invite: Invite(host: "127.0.0.1", port: port, session: invite.session, secret: invite.secret))
            let journal = GroupSessionJournal(session: session)
            await eventually("the stored attachment is announced") { journal.currentAttachments.count == 1 }
            #expect(journal.currentAttachments.first?.label == "kept")
            #expect(try await journal.load(journal.currentAttachments[0]) == content)
            session.leave()
        }
    }

    static func sha256(_ data: Data) -> [UInt8] { Array(SHA256.hash(data: data)) }
}
