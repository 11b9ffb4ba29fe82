import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay
import Testing
import TestSupport

/// Pseudo-random bytes (xorshift64*), fast enough for tens of megabytes in a debug build.
func journalTestBytes(_ count: Int, seed: UInt64) -> Data {
    var data = Data(count: (count + 7) / 8 * 8)
    data.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        var state = seed | 1
        for i in words.indices {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            words[i] = state &* 2_685_821_657_736_338_717
        }
    }
    return data.prefix(count)
}

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-journal-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Every regular file under `directory`, recursively.
func filesUnder(_ directory: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
    var files: [String] = []
    while let name = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let path = directory + "/" + name
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            files.append(path)
        }
    }
    return files
}

@Suite("Group session journal over the relay (TCP on loopback)", .timeLimit(.minutes(10)))
struct RelayJournalTests {
    static func center(_ port: Int) -> GroupActivityCenter<WatchMovie> {
        GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
    }

    @Test("a late joiner loads a 50 MB attachment after its uploader left; messages flow during the upload")
    func lateJoinerGetsLargeAttachment() async throws {
        try await withRelay { relay, port in
            let center = Self.center(port)
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "big"), invite: invite)
            try await a.join()
            let b = try await center.accept(invite)
            try await b.join()
            await eventually("a and b joined") { a.activeParticipants.count == 2 }

            let payload = journalTestBytes(50_000_000, seed: 42)
            let uploadDone = LockedBox(false)
            let started = LockedBox(false)
            let receivedDuringUpload = LockedBox(0)
            let receivedTotal = LockedBox(0)
            let inbox = GroupSessionMessenger(session: b).messages(of: Chat.self)
            let reader = Task {
                for await _ in inbox {
                    receivedTotal.mutate { $0 += 1 }
                    if !uploadDone.value { receivedDuringUpload.mutate { $0 += 1 } }
                }
            }
            defer { reader.cancel() }
            let journal = GroupSessionJournal(session: a)
            let upload = Task {
                defer { uploadDone.mutate { $0 = true } }
                return try await journal.add(payload, label: "movie.bin") { _, _ in started.mutate { $0 = true } }
            }
            // Chat from the uploader's own connection while its chunks are in flight.
            await eventually("the upload started") { started.value }
            let messenger = GroupSessionMessenger(session: a)
            var sent = 0
            while !uploadDone.value && sent < 500 {
                try messenger.send(Chat(sender: 0, index: sent))
                sent += 1
                try await Task.sleep(for: .milliseconds(5))
            }
            let attachment = try await upload.value
            #expect(attachment.size == 50_000_000)
            #expect(attachment.label == "movie.bin")
            await eventually("b got every chat") { receivedTotal.value == sent }
            #expect(receivedDuringUpload.value > 0, "messages must not wait for the whole upload")

            // The uploader leaves; a late joiner still gets the attachment from the relay.
            a.leave()
            await eventually("a gone") { b.activeParticipants.count == 1 }
            let d = try await center.accept(invite)
            let dJournal = GroupSessionJournal(session: d)
            await eventually("d sees the attachment") { dJournal.currentAttachments.map(\.id) == [attachment.id] }
            let progress = LockedBox(0)
            let loaded = try await dJournal.load(dJournal.currentAttachments[0]) { received, _ in
                progress.mutate { $0 = received }
            }
            #expect(loaded == payload)
            #expect(progress.value == payload.count)
            #expect(relay.metrics.counters.bytesForwarded > 50_000_000)
            b.leave()
            d.leave()
        }
    }

    @Test("add, remove and the attachments list converge on every member")
    func convergence() async throws {
        struct Playlist: Codable, Sendable, Equatable { var items: [String] }
        try await withRelay { _, port in
            let center = Self.center(port)
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "lists"), invite: invite)
            try await a.join()
            let b = try await center.accept(invite)
            try await b.join()
            let c = try await center.accept(invite)
            try await c.join()
            let journals = [a, b, c].map { GroupSessionJournal(session: $0) }
            let updates = journals.map { Collector($0.attachments) }

            async let x = journals[0].add(journalTestBytes(300_000, seed: 1), label: "x")
            async let y = journals[1].add(journalTestBytes(10, seed: 2), label: "y")
            async let z = journals[2].add(Playlist(items: ["one", "two"]))
            async let empty = journals[0].add(Data(), label: "empty")
            let added = try await [x, y, z, empty]
            let ids = Set(added.map(\.id))
            await eventually("all list four") { journals.allSatisfy { Set($0.currentAttachments.map(\.id)) == ids } }
            let order = journals[0].currentAttachments.map(\.id)
            for journal in journals { #expect(journal.currentAttachments.map(\.id) == order, "same order everywhere") }
            #expect(journals[1].currentAttachments.first { $0.label == "Playlist" }?.uploader == c.localParticipant)

            let playlist = try await journals[0].load(Playlist.self, from: added[2])
            #expect(playlist == Playlist(items: ["one", "two"]))
            #expect(try await journals[2].load(added[3]).isEmpty)
            #expect(try await journals[1].load(added[0]) == journalTestBytes(300_000, seed: 1))

            try await journals[2].remove(added[0])
            await eventually("all list three") {
                journals.allSatisfy { Set($0.currentAttachments.map(\.id)) == ids.subtracting([added[0].id]) }
            }
            await #expect(throws: GroupSessionError.self) { try await journals[1].remove(added[0]) }
            await #expect(throws: GroupSessionError.self) { _ = try await journals[1].load(added[0]) }
            // Each stream re-emitted the whole list: its last value is the final list.
            await eventually("streams caught up") {
                updates.allSatisfy { Set(($0.values.last ?? []).map(\.id)) == ids.subtracting([added[0].id]) }
            }
            #expect(updates.allSatisfy { $0.values.contains { $0.count == 4 } })
            for session in [a, b, c] { session.leave() }
        }
    }

    @Test("attachments above 100 MiB get a clear error from the client and from the relay")
    func tooLarge() async throws {
        try await withRelay { _, port in
            let center = Self.center(port)
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "huge"), invite: invite)
            try await a.join()
            let journal = GroupSessionJournal(session: a)
            let error = await #expect(throws: GroupSessionError.self) {
                try await journal.add(Data(count: GroupSessionJournal.maximumAttachmentSize + 1))
            }
            #expect(error?.description.contains("exceeds the limit of 104857600 bytes") == true)

            // A client that ignores the limit is refused by the relay with code 30; nothing is stored.
            let raw = try await RawClient.connect(port: port, invite: invite)
            let token: UInt64 = (1 << 63) | 7
            let header = JournalHeader(
                id: .random(), size: UInt64(100 << 20) + 1, chunkSize: 65_536, sealedMetadata: [1, 2, 3])
            try raw.connection.send(
                Frame(type: .journalPut, session: invite.session, sender: raw.id,
                      payload: JournalPutPayload(token: token, header: header).encoded()))
            await eventually("raw client refused") { !raw.errors().isEmpty }
            #expect(raw.errors().first?.code == .attachmentTooLarge)
            #expect(raw.errors().first?.senderSequence == token)
            // The member is unaffected and can still add.
            let small = try await journal.add(Data("ok".utf8))
            await eventually("raw client sees the small one only") {
                raw.received.values.filter { $0.type == .journalAdded }.count == 1
            }
            #expect(journal.currentAttachments.map(\.id) == [small.id])
            a.leave()
        }
    }

    @Test("the journal quota refuses the offender only; the others and their messages carry on")
    func quota() async throws {
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.limits.journal.quota = 1 << 20
        try await withRelay(configuration) { _, port in
            let center = Self.center(port)
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "quota"), invite: invite)
            try await a.join()
            let b = try await center.accept(invite)
            try await b.join()
            let c = try await center.accept(invite)
            try await c.join()
            let bErrors = Collector(b.relayErrors)
            let cGot = Collector(GroupSessionMessenger(session: c).messages(of: Chat.self))
            let aJournal = GroupSessionJournal(session: a)
            let first = try await aJournal.add(journalTestBytes(600_000, seed: 3))

            // B chats with C throughout.
            let chatter = Task {
                let messenger = GroupSessionMessenger(session: b)
                for index in 0..<200 {
                    try messenger.send(Chat(sender: 1, index: index))
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            let error = await #expect(throws: GroupSessionError.self) {
                try await aJournal.add(journalTestBytes(600_000, seed: 4))
            }
            #expect(error?.relayCode == .quotaExceeded)
            #expect(error?.description.contains("quota") == true)
            try await chatter.value
            await eventually("c got all of b's chats") { cGot.values.count == 200 }
            #expect(cGot.values.map(\.0.index) == Array(0..<200))
            #expect(bErrors.values.isEmpty, "only the offender hears about the quota")
            #expect(a.state == .joined)

            // Removing frees the quota again.
            try await aJournal.remove(first)
            let second = try await aJournal.add(journalTestBytes(600_000, seed: 4))
            await eventually("c lists the second") {
                GroupSessionJournal(session: c).currentAttachments.map(\.id) == [second.id]
            }
            for session in [a, b, c] { session.leave() }
        }
    }

    @Test("a canary in an attachment, a message and a retained message never reaches the relay's files, logs or forwarded bytes; files are 0600")
    func canary() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let records = LockedBox<[String]>([])
        let logger = Logger(label: "relay") { _ in CapturingLogHandler(records: records) }
        let canary = "CANARY-journal-\(UUID().uuidString)"
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory
        try await withRelay(configuration, logger: logger) { _, port in
            let center = Self.center(port)
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "canary"), invite: invite)
            try await a.join()
            let spy = try await RawClient.connect(port: port, invite: invite)
            var content = Data()
            while content.count < 200_000 { content.append(Data((canary + " ").utf8)) }
            let attachment = try await GroupSessionJournal(session: a).add(content, label: canary)
            // The canary in a message and a retained message too: the session store's files hold them sealed.
            let messenger = GroupSessionMessenger(session: a)
            try messenger.send(Chat(sender: 0, index: 0, text: canary))
            try messenger.send(Chat(sender: 0, index: 1, text: canary), retainedAs: "canary")

            // The spy, a member without the secret's keys in use, fetches every chunk as sealed bytes.
            await eventually("spy saw the announcement") { spy.received.values.contains { $0.type == .journalAdded } }
            try spy.connection.send(
                Frame(type: .journalFetch, session: invite.session, sender: spy.id,
                      payload: JournalRequestPayload(token: (1 << 63) | 1, id: attachment.id, first: 0, count: 4).encoded()))
            await eventually("spy got the chunks") { spy.received.values.filter { $0.type == .journalChunk }.count == 4 }

            let b = try await center.accept(invite)
            let loaded = try await GroupSessionJournal(session: b).load(attachment)
            #expect(loaded == content)

            let needle = Array(canary.utf8)
            #expect(!spy.wireBytes().contains(subsequence: needle))
            let files = filesUnder(directory)
            #expect(files.contains { $0.hasSuffix("/chunks") } && files.contains { $0.hasSuffix("/manifest") })
            #expect(files.contains { $0.hasSuffix("/frames") } && files.contains { $0.hasSuffix("/state") })
            for file in files {
                let bytes = [UInt8](FileManager.default.contents(atPath: file) ?? Data())
                #expect(!bytes.contains(subsequence: needle), "\(file)")
                let mode = (try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber)?.intValue
                #expect(mode == 0o600, "\(file)")
            }
            for record in records.value { #expect(!record.contains(canary)) }
            #expect(!records.value.isEmpty)
            a.leave()
            b.leave()
        }
    }

    @Test("the journal's files are deleted when the last member leaves")
    func deletedWithSession() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory
        try await withRelay(configuration) { relay, port in
            let center = Self.center(port)
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "gone"), invite: invite)
            try await a.join()
            let b = try await center.accept(invite)
            try await b.join()
            _ = try await GroupSessionJournal(session: a).add(journalTestBytes(150_000, seed: 5))
            _ = try await GroupSessionJournal(session: b).add(journalTestBytes(10, seed: 6))
            let sessionPath = "\(directory)/sessions/\(invite.session)"
            #expect(filesUnder(sessionPath + "/journal").count == 4)
            a.leave()
            try await Task.sleep(for: .milliseconds(200))
            #expect(filesUnder(sessionPath + "/journal").count == 4, "one member is left: the journal stays")
            b.leave()
            await eventually("the session's directory is gone") { !FileManager.default.fileExists(atPath: sessionPath) }
            await eventually("the session is gone") { relay.metrics.sessions == 0 }
        }
    }

    @Test("a tampered or reordered chunk at the relay is rejected by the reader")
    func tamperedOnDisk() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory
        try await withRelay(configuration) { _, port in
            let center = Self.center(port)
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "tamper"), invite: invite)
            try await a.join()
            let content = journalTestBytes(3 * 65_536, seed: 9)
            let attachment = try await GroupSessionJournal(session: a).add(content)
            let b = try await center.accept(invite)
            let journal = GroupSessionJournal(session: b)
            #expect(try await journal.load(attachment) == content)

            let path = "\(directory)/sessions/\(invite.session)/journal/\(attachment.id)/chunks"
            let original = try #require(FileManager.default.contents(atPath: path))
            let stride = 65_536 + 16
            // One flipped bit in chunk 1.
            var tampered = original
            tampered[original.startIndex + stride + 100] ^= 0x01
            try tampered.write(to: URL(fileURLWithPath: path))
            await #expect(throws: GroupSessionError.self) { _ = try await journal.load(attachment) }
            // Chunks 0 and 1 swapped: each is intact, but bound to its index.
            var swapped = original
            swapped.replaceSubrange(0..<stride, with: original[stride..<2 * stride])
            swapped.replaceSubrange(stride..<2 * stride, with: original[0..<stride])
            try swapped.write(to: URL(fileURLWithPath: path))
            let error = await #expect(throws: GroupSessionError.self) { _ = try await journal.load(attachment) }
            #expect(error?.description.contains("chunk 0") == true)
            // Restored, it loads again: the session survived the bad reads.
            try original.write(to: URL(fileURLWithPath: path))
            #expect(try await journal.load(attachment) == content)
            a.leave()
            b.leave()
        }
    }
}
