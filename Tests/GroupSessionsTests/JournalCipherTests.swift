import Foundation
import Logging
import GroupSessions
import NIOCore
import PropertyBased
import Testing
import TestSupport

@Suite("Journal wire payloads and cipher")
struct JournalCipherTests {
    static let keys = SessionKeys(secret: Array(repeating: 7, count: 32), session: SessionID(high: 1, low: 2))
    static let uploader = ParticipantID(rawValue: 99)

    @Test("payloads round-trip")
    func payloadsRoundTrip() async {
        await propertyCheck(
            count: 200, input: Gen.uint64(), Gen.uint64(), Gen.uint32(), Gen.uint32(), Gen.uint8().array(of: 0...100)
        ) { a, b, c, d, bytes in
            let id = AttachmentID(high: a, low: b)
            let header = JournalHeader(id: id, size: a, chunkSize: max(1, c), sealedMetadata: bytes)
            let put = JournalPutPayload(token: b, header: header)
            let decodedPut = try JournalPutPayload(decoding: put.encoded())
            #expect(decodedPut == put)
            let chunk = JournalChunkPayload(id: id, index: c, sealed: ByteBuffer(bytes: bytes))
            let decodedChunk = try JournalChunkPayload(decoding: chunk.encoded())
            #expect(decodedChunk == chunk)
            let request = JournalRequestPayload(token: a, id: id, first: c, count: d)
            let decodedRequest = try JournalRequestPayload(decoding: request.encoded(), type: .journalFetch)
            #expect(decodedRequest == request)
        }
    }

    @Test("journal payload decoders are total: random bytes give a value or an error")
    func decodersTotal() async {
        await propertyCheck(count: 500, input: Gen.uint8().array(of: 0...80)) { bytes in
            let buffer = ByteBuffer(bytes: bytes)
            _ = try? JournalPutPayload(decoding: buffer)
            _ = try? JournalChunkPayload(decoding: buffer)
            _ = try? JournalRequestPayload(decoding: buffer, type: .journalFetch)
            _ = try? AttachmentMetadata(decoding: bytes)
        }
    }

    @Test("chunk geometry: counts and lengths", arguments: [
        (0, 1),
        (1, 1),
        (65_536, 1),
        (65_537, 2),
        (3 * 65_536, 3),
    ])
    func geometry(size: Int, count: Int) {
        let header = JournalHeader(id: .random(), size: UInt64(size), chunkSize: 65_536, sealedMetadata: [0, 0])
        let expectedCount = size == 0 ? 0 : count
        #expect(header.chunkCount == expectedCount)
        #expect((0..<header.chunkCount).reduce(0) { $0 + header.plaintextLength(ofChunk: $1) } == size)
        #expect(header.storedBytes == size + 16 * expectedCount + 2)
    }

    @Test("chunks open only at their own index, attachment, uploader and size")
    func chunkBinding() throws {
        let id = AttachmentID.random()
        let cipher = JournalCipher(keys: Self.keys, id: id, uploader: Self.uploader)
        let plain = Data((0..<100).map { UInt8($0) })
        let sealed = try cipher.sealChunk(plain, index: 3, size: 1_000, chunkSize: 100)
        #expect(try cipher.openChunk(sealed, index: 3, size: 1_000, chunkSize: 100) == plain)
        // Reordered: the same chunk presented at another index.
        #expect(throws: (any Error).self) { try cipher.openChunk(sealed, index: 4, size: 1_000, chunkSize: 100) }
        // Truncated attachment: the same chunk claimed to belong to a shorter one.
        #expect(throws: (any Error).self) { try cipher.openChunk(sealed, index: 3, size: 400, chunkSize: 100) }
        // Swapped between attachments, uploaders or sessions.
        let other = JournalCipher(keys: Self.keys, id: .random(), uploader: Self.uploader)
        #expect(throws: (any Error).self) { try other.openChunk(sealed, index: 3, size: 1_000, chunkSize: 100) }
        let impostor = JournalCipher(keys: Self.keys, id: id, uploader: ParticipantID(rawValue: 98))
        #expect(throws: (any Error).self) { try impostor.openChunk(sealed, index: 3, size: 1_000, chunkSize: 100) }
        let otherSession = SessionKeys(secret: Array(repeating: 7, count: 32), session: SessionID(high: 1, low: 3))
        #expect(throws: (any Error).self) {
            try JournalCipher(keys: otherSession, id: id, uploader: Self.uploader)
                .openChunk(sealed, index: 3, size: 1_000, chunkSize: 100)
        }
        // Any flipped bit.
        for offset in stride(from: 0, to: sealed.readableBytes, by: 13) {
            var tampered = sealed
            tampered.setInteger(sealed.getInteger(at: offset, as: UInt8.self)! ^ 0x80, at: offset)
            #expect(throws: (any Error).self) { try cipher.openChunk(tampered, index: 3, size: 1_000, chunkSize: 100) }
        }
    }

    @Test("metadata opens only with a matching clear header")
    func metadataBinding() throws {
        let id = AttachmentID.random()
        let cipher = JournalCipher(keys: Self.keys, id: id, uploader: Self.uploader)
        let metadata = AttachmentMetadata(size: 1_000, chunkSize: 100, digest: Array(repeating: 1, count: 32), label: "poster")
        let header = JournalHeader(id: id, size: 1_000, chunkSize: 100, sealedMetadata: try cipher.sealMetadata(metadata))
        #expect(try cipher.openMetadata(of: header) == metadata)
        var shrunk = header
        shrunk.size = 500
        #expect(throws: (any Error).self) { try cipher.openMetadata(of: shrunk) }
        var rechunked = header
        rechunked.chunkSize = 50
        #expect(throws: (any Error).self) { try cipher.openMetadata(of: rechunked) }
        #expect(throws: (any Error).self) {
            try JournalCipher(keys: Self.keys, id: id, uploader: ParticipantID(rawValue: 1)).openMetadata(of: header)
        }
    }

    @Test("an AES-256-GCM session's journal seals with AES-256-GCM: the ChaCha20-Poly1305 key cannot open it")
    func journalFollowsTheSuite() throws {
        let secret = Array(repeating: UInt8(7), count: 32)
        let aes = SessionKeys(secret: secret, session: SessionID(high: 1, low: 2), suite: .aes256GCM)
        let id = AttachmentID.random()
        let cipher = JournalCipher(keys: aes, id: id, uploader: Self.uploader)
        #expect(cipher.suite == .aes256GCM)
        let plain = Data("attachment".utf8)
        let sealed = try cipher.sealChunk(plain, index: 0, size: 10, chunkSize: 100)
        #expect(try cipher.openChunk(sealed, index: 0, size: 10, chunkSize: 100) == plain)
        let chacha = JournalCipher(keys: Self.keys, id: id, uploader: Self.uploader)
        #expect(throws: (any Error).self) { try chacha.openChunk(sealed, index: 0, size: 10, chunkSize: 100) }
    }

    @Test("the journal works over the in-memory transport too (same hub rules)", arguments: PayloadSuite.allCases)
    func inMemory(suite: PayloadSuite) async throws {
        var limits = HubLimits()
        limits.journal.quota = 300_000
        let transport = InMemoryTransport(limits: limits)
        let center = GroupActivityCenter<WatchMovie>(transport: transport, logger: Logger(label: "test"))
        let invite = Invite.generate(host: "127.0.0.1", port: 1, suite: suite)
        let a = try await center.activate(WatchMovie(movie: "mem"), invite: invite)
        try await a.join()
        let journal = GroupSessionJournal(session: a)
        let content = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let attachment = try await journal.add(content, label: "mem")
        let b = try await center.accept(invite)
        let other = GroupSessionJournal(session: b)
        await eventually("b lists it") { other.currentAttachments.map(\.id) == [attachment.id] }
        #expect(try await other.load(attachment) == content)
        // Waiting members cannot change the journal.
        await #expect(throws: GroupSessionError.self) { _ = try await other.add(Data([1])) }
        try await b.join()
        let error = await #expect(throws: GroupSessionError.self) { _ = try await other.add(content) }
        #expect(error?.relayCode == .quotaExceeded)
        a.leave()
        b.leave()
    }

    @Test("GroupActivities' spellings: attachment.load(Data.self), attachment.load(Value.self), journal.remove(attachment:)")
    func appleSpellings() async throws {
        let transport = InMemoryTransport()
        let center = GroupActivityCenter<WatchMovie>(transport: transport, logger: Logger(label: "test"))
        let invite = Invite.generate(host: "127.0.0.1", port: 1)
        let a = try await center.activate(WatchMovie(movie: "spell"), invite: invite)
        try await a.join()
        let journal = GroupSessionJournal(session: a)
        let added = try await journal.add(WatchMovie(movie: "in the journal"))
        let b = try await center.accept(invite)
        try await b.join()
        let other = GroupSessionJournal(session: b)
        await eventually("b lists it") { other.currentAttachments.map(\.id) == [added.id] }
        let listed = try #require(other.currentAttachments.first)
        #expect(listed == added)  // the same attachment, whichever member's journal announced it
        #expect(try await listed.load(WatchMovie.self) == WatchMovie(movie: "in the journal"))
        #expect(try await listed.load(Data.self) == JSONEncoder().encode(WatchMovie(movie: "in the journal")))
        try await other.remove(attachment: listed)
        await eventually("a sees it removed") { journal.currentAttachments.isEmpty }
        a.leave()
        b.leave()
    }
}
