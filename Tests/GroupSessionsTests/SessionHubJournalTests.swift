import GroupSessions
import NIOCore
import Testing

/// The hub's journal as a sans-IO state machine: storage reads and writes are actions, and what
/// depends on them waits for their outcome (`journalCompleted`).
@Suite("SessionHub journal (storage as actions)")
struct SessionHubJournalTests {
    let session = SessionID(high: 1, low: 2)
    let token = Array(repeating: UInt8(3), count: 32)

    func admitAndJoin(_ hub: inout SessionHub<Int>, _ connection: Int, id: UInt64) {
        _ = hub.connect(connection)
        _ = hub.receive(
            Frame(type: .hello, session: session, sender: ParticipantID(rawValue: id), payload: HelloPayload(token: token).encoded()),
            from: connection, now: .zero)
        _ = hub.receive(Frame(type: .join, session: session, sender: ParticipantID(rawValue: id)), from: connection, now: .zero)
    }

    func sends(_ actions: [HubAction<Int>]) -> [(Int, Frame)] {
        actions.compactMap { if case .send(let c, let f, _) = $0 { (c, f) } else { nil } }
    }

    func operations(_ actions: [HubAction<Int>]) -> [JournalOperation<Int>] {
        actions.compactMap { if case .journal(let operation) = $0 { operation } else { nil } }
    }

    func put(_ header: JournalHeader, from id: UInt64) -> Frame {
        Frame(type: .journalPut, session: session, sender: ParticipantID(rawValue: id),
              payload: JournalPutPayload(token: 1 << 63 | 7, header: header).encoded())
    }

    func chunk(_ header: JournalHeader, _ index: Int, from id: UInt64) -> Frame {
        Frame(type: .journalChunk, session: session, sender: ParticipantID(rawValue: id),
              payload: JournalChunkPayload(
                id: header.id, index: UInt32(index), sealed: ByteBuffer(repeating: UInt8(index), count: header.sealedLength(ofChunk: index))
              ).encoded())
    }

    @Test("an upload is begin, append per chunk and commit actions; a chunk is acked only once written, the announcement comes with the commit")
    func upload() throws {
        var hub = SessionHub<Int>(limits: HubLimits())
        admitAndJoin(&hub, 1, id: 1)
        admitAndJoin(&hub, 2, id: 2)
        let header = JournalHeader(id: .random(), size: 2_500, chunkSize: 1_000, sealedMetadata: [1, 2, 3])

        let begun = hub.receive(put(header, from: 1), from: 1, now: .zero)
        guard case .begin(let begunHeader, session)? = operations(begun).first else { Issue.record("no begin"); return }
        #expect(begunHeader == header)
        #expect(sends(begun).isEmpty)

        var appends: [JournalOperation<Int>] = []
        for index in 0..<3 {
            let received = hub.receive(chunk(header, index, from: 1), from: 1, now: .zero)
            #expect(sends(received).isEmpty, "acknowledged before it was written")
            appends += operations(received)
        }
        #expect(appends.count == 3)
        var commit: [HubAction<Int>] = []
        for (index, append) in appends.enumerated() {
            guard case .append(_, let appended, header.id, session) = append else { Issue.record("not an append"); return }
            #expect(appended == index)
            let done = hub.journalCompleted(append, .done)
            #expect(sends(done).first.map { $0.0 == 1 && $0.1.type == .journalAck } == true)
            if index < 2 { #expect(operations(done).isEmpty) } else { commit = done }
        }
        guard case .commit(let stored, session)? = operations(commit).first else { Issue.record("no commit"); return }
        #expect(stored.header == header)
        // The commit comes before the announcement in the same batch, stamped in the session's order.
        let commitIndex = try #require(commit.firstIndex { if case .journal(.commit) = $0 { true } else { false } })
        let announcementIndex = try #require(commit.firstIndex { if case .send(2, let f, _) = $0 { f.type == .journalAdded } else { false } })
        #expect(commitIndex < announcementIndex)
        #expect(hub.attachments(in: session).map(\.header) == [header])
        #expect(hub.journalBytes == header.storedBytes)

        // A fetch is a read action; its chunks go out once read.
        let fetch = hub.receive(
            Frame(type: .journalFetch, session: session, sender: ParticipantID(rawValue: 2),
                  payload: JournalRequestPayload(token: 1 << 63 | 9, id: header.id, first: 1, count: 2).encoded()),
            from: 2, now: .zero)
        let read = try #require(operations(fetch).first)
        guard case .read(let range, _, session, 2, _) = read else { Issue.record("not a read"); return }
        #expect(range == 1..<3)
        #expect(sends(fetch).isEmpty)
        let served = sends(hub.journalCompleted(read, .chunks([ByteBuffer(repeating: 1, count: 1_016), ByteBuffer(repeating: 2, count: 516)])))
        #expect(served.map(\.0) == [2, 2])
        #expect(served.allSatisfy { $0.1.type == .journalChunk })
        let failed = sends(hub.journalCompleted(read, .failed))
        #expect(try ErrorPayload(decoding: try #require(failed.first).1.payload).code == .journalStorageFailed)
    }

    @Test("a chunk the storage could not write discards the upload and refuses the uploader only")
    func failedAppend() throws {
        var hub = SessionHub<Int>(limits: HubLimits())
        admitAndJoin(&hub, 1, id: 1)
        admitAndJoin(&hub, 2, id: 2)
        let header = JournalHeader(id: .random(), size: 1_000, chunkSize: 1_000, sealedMetadata: [])
        _ = hub.receive(put(header, from: 1), from: 1, now: .zero)
        let append = try #require(operations(hub.receive(chunk(header, 0, from: 1), from: 1, now: .zero)).first)
        let outcome = hub.journalCompleted(append, .failed)
        #expect(sends(outcome).map(\.0) == [1])
        #expect(try ErrorPayload(decoding: sends(outcome)[0].1.payload).code == .journalStorageFailed)
        #expect(operations(outcome).contains { if case .discard(header.id, session) = $0 { true } else { false } })
        #expect(hub.attachments(in: session).isEmpty)
    }

    @Test("a commit the storage could not make takes the announcement back, stamped; restored attachments are replayed")
    func failedCommitAndRestore() throws {
        var hub = SessionHub<Int>(limits: HubLimits())
        admitAndJoin(&hub, 1, id: 1)
        admitAndJoin(&hub, 2, id: 2)
        let header = JournalHeader(id: .random(), size: 0, chunkSize: 1_000, sealedMetadata: [])
        let put = hub.receive(put(header, from: 1), from: 1, now: .zero)
        let commit = try #require(operations(put).first { if case .commit = $0 { true } else { false } })
        let added = try #require(sends(put).first { $0.0 == 2 && $0.1.type == .journalAdded })
        let undone = sends(hub.journalCompleted(commit, .failed))
        let removed = try #require(undone.first { $0.0 == 2 && $0.1.type == .journalRemoved })
        #expect(removed.1.sequence > added.1.sequence)
        #expect(undone.contains { $0.0 == 1 && $0.1.type == .error })
        #expect(hub.attachments(in: session).isEmpty)

        var restored = SessionHub<Int>(limits: HubLimits())
        let stored = StoredAttachment(header: header, uploader: ParticipantID(rawValue: 1), sequence: 4)
        restored.restoreJournal([stored], of: session)
        _ = restored.connect(3)
        let welcome = sends(restored.receive(
            Frame(type: .hello, session: session, sender: ParticipantID(rawValue: 3), payload: HelloPayload(token: token).encoded()),
            from: 3, now: .zero))
        #expect(welcome.contains { $0.1.type == .journalAdded && $0.1.flags.contains(.replayed) && $0.1.sequence == 4 })
    }
}
