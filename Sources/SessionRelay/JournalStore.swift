import Foundation
import GroupSessions
import Logging
import NIOCore
import Synchronization

/// Journal attachments on disk, under a relay's data directory: sealed chunks the relay cannot
/// read, kept so they survive a relay restart.
///
/// Layout (directories mode 0700, files mode 0600):
///
/// ```
/// DIR/sessions/<session-id-hex>/journal/<attachment-id-hex>/chunks     sealed chunks, back to back
/// DIR/sessions/<session-id-hex>/journal/<attachment-id-hex>/manifest   JSON: header, uploader, stamp
/// ```
///
/// Chunk `i` starts at `i × (chunkSize + 16)`. An attachment is complete once its manifest
/// exists (written to a temporary name, then renamed); opening a store lists the complete
/// attachments and deletes incomplete uploads. Deleting a session removes its `journal`
/// directory (and the session directory, if nothing else is in it).
///
/// Every read and write runs on a Dispatch worker thread (``blockingIO(_:)``) while the caller
/// (the relay's storage task) waits, never on an event loop or under a session's lock; the
/// index of complete attachments is kept in memory.
///
/// ```swift
/// let store = try JournalStore(directory: "/var/lib/coplay", logger: logger)
/// try await store.beginUpload(header, in: session)
/// ```
package final class JournalStore: JournalStorage {
    private struct Manifest: Codable {
        var version = 1
        var uploader: UInt64
        var sequence: UInt64
        /// The clear header with the sealed metadata, base64.
        var header: String
    }

    private struct Entry {
        var header: JournalHeader
        var stored: StoredAttachment?
        var writer: FileHandle?
    }

    /// The data directory.
    package let directory: String
    private let logger: Logger
    private let journals = Mutex<[SessionID: [AttachmentID: Entry]]>([:])

    /// Opens (creating it if needed) the journal store under `directory` and loads every
    /// complete attachment found there; incomplete uploads are deleted.
    ///
    /// - Parameters:
    ///   - directory: The relay's data directory (`coplay serve --data-dir`).
    ///   - logger: Where the store logs (info and below; ids and sizes only).
    /// - Throws: If the `sessions` directory cannot be created.
    package init(directory: String, logger: Logger) throws {
        self.directory = directory
        self.logger = logger
        try Self.makeDirectory(directory + "/sessions")
        var loaded: [SessionID: [AttachmentID: Entry]] = [:]
        let fm = FileManager.default
        for sessionName in (try? fm.contentsOfDirectory(atPath: directory + "/sessions")) ?? [] {
            guard let session = SessionID(hex: sessionName) else { continue }
            let journalPath = Self.journalPath(directory, session)
            for name in (try? fm.contentsOfDirectory(atPath: journalPath)) ?? [] {
                let path = journalPath + "/" + name
                guard let id = AttachmentID(hex: name), let stored = Self.readManifest(path), stored.header.id == id,
                    Self.fileSize(path + "/chunks") == stored.header.storedBytes - stored.header.sealedMetadata.count
                else {
                    logger.info("deleting an incomplete journal upload", metadata: ["session": "\(session)", "attachment": "\(name)"])
                    try? fm.removeItem(atPath: path)
                    continue
                }
                loaded[session, default: [:]][id] = Entry(header: stored.header, stored: stored)
            }
        }
        journals.withLock { $0 = loaded }
        logger.info("journal store opened", metadata: [
            "directory": "\(directory)", "sessions": "\(loaded.count)",
            "attachments": "\(loaded.values.reduce(0) { $0 + $1.count })",
        ])
    }

    /// Sessions that have a journal on disk.
    package var sessions: [SessionID] { journals.withLock { Array($0.keys) } }

    // MARK: Paths

    static func journalPath(_ directory: String, _ session: SessionID) -> String {
        "\(directory)/sessions/\(session)/journal"
    }

    private func attachmentPath(_ session: SessionID, _ id: AttachmentID) -> String {
        "\(Self.journalPath(directory, session))/\(id)"
    }

    private static func makeDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    private static func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }

    private static func readManifest(_ path: String) -> StoredAttachment? {
        guard let data = FileManager.default.contents(atPath: path + "/manifest"),
            let manifest = try? JSONDecoder().decode(Manifest.self, from: data), manifest.version == 1,
            let bytes = Data(base64Encoded: manifest.header)
        else { return nil }
        var buffer = ByteBuffer(bytes: bytes)
        guard let header = try? JournalHeader.decode(from: &buffer, type: .journalAdded) else { return nil }
        return StoredAttachment(header: header, uploader: ParticipantID(rawValue: manifest.uploader), sequence: manifest.sequence)
    }

    // MARK: JournalStorage

    package func beginUpload(_ header: JournalHeader, in session: SessionID) async throws {
        try await blockingIO { try self.beginUploadNow(header, in: session) }
    }

    package func appendChunk(_ sealed: ByteBuffer, index: Int, of id: AttachmentID, in session: SessionID) async throws {
        try await blockingIO { try self.appendChunkNow(sealed, index: index, of: id, in: session) }
    }

    package func commitUpload(_ attachment: StoredAttachment, in session: SessionID) async throws {
        try await blockingIO { try self.commitUploadNow(attachment, in: session) }
    }

    package func discard(_ id: AttachmentID, in session: SessionID) async {
        _ = try? await blockingIO { self.discardNow(id, in: session) }
    }

    package func chunks(_ range: Range<Int>, of id: AttachmentID, in session: SessionID) async throws -> [ByteBuffer] {
        try await blockingIO { try self.chunksNow(range, of: id, in: session) }
    }

    package func deleteSession(_ session: SessionID) async {
        _ = try? await blockingIO { self.deleteSessionNow(session) }
    }

    // MARK: Blocking I/O

    /// Complete attachments of `session`, in announcement order (from memory).
    package func attachments(in session: SessionID) -> [StoredAttachment] {
        journals.withLock { ($0[session]?.values.compactMap(\.stored) ?? []).sorted { $0.sequence < $1.sequence } }
    }

    /// Bytes of complete attachments of `session`.
    package func storedBytes(in session: SessionID) -> Int {
        journals.withLock { $0[session]?.values.reduce(0) { $0 + ($1.stored?.header.storedBytes ?? 0) } ?? 0 }
    }

    /// Bytes of complete attachments over every session.
    package func totalStoredBytes() -> Int {
        journals.withLock { journals in
            journals.values.reduce(0) { sum, entries in
                sum + entries.values.reduce(0) { $0 + ($1.stored?.header.storedBytes ?? 0) }
            }
        }
    }

    private func beginUploadNow(_ header: JournalHeader, in session: SessionID) throws {
        let path = attachmentPath(session, header.id)
        try Self.makeDirectory(path)
        guard FileManager.default.createFile(atPath: path + "/chunks", contents: nil, attributes: [.posixPermissions: 0o600]),
            let writer = FileHandle(forWritingAtPath: path + "/chunks")
        else {
            logger.info("cannot create a journal file", metadata: ["path": "\(path)"])
            throw GroupSessionError.protocolViolation("cannot create \(path)/chunks")
        }
        journals.withLock { $0[session, default: [:]][header.id] = Entry(header: header, writer: writer) }
    }

    private func appendChunkNow(_ sealed: ByteBuffer, index: Int, of id: AttachmentID, in session: SessionID) throws {
        guard let writer = journals.withLock({ $0[session]?[id]?.writer }) else { throw GroupSessionError.attachmentNotFound }
        try writer.write(contentsOf: Data(sealed.readableBytesView))
    }

    private func commitUploadNow(_ attachment: StoredAttachment, in session: SessionID) throws {
        let id = attachment.header.id
        guard let writer = journals.withLock({ $0[session]?[id]?.writer }) else { throw GroupSessionError.attachmentNotFound }
        try writer.synchronize()
        try writer.close()
        let path = attachmentPath(session, id)
        let manifest = Manifest(
            uploader: attachment.uploader.rawValue, sequence: attachment.sequence,
            header: Data(attachment.header.encoded().readableBytesView).base64EncodedString())
        let temporary = path + "/manifest.tmp"
        guard FileManager.default.createFile(
            atPath: temporary, contents: try JSONEncoder().encode(manifest), attributes: [.posixPermissions: 0o600])
        else { throw GroupSessionError.protocolViolation("cannot write \(temporary)") }
        guard rename(temporary, path + "/manifest") == 0 else {
            throw GroupSessionError.protocolViolation("cannot rename \(temporary)")
        }
        journals.withLock { journals in
            journals[session]?[id]?.writer = nil
            journals[session]?[id]?.stored = attachment
        }
        logger.debug("journal attachment stored", metadata: [
            "session": "\(session)", "attachment": "\(id)", "bytes": "\(attachment.header.storedBytes)",
        ])
    }

    private func discardNow(_ id: AttachmentID, in session: SessionID) {
        let entry = journals.withLock { $0[session]?.removeValue(forKey: id) }
        try? entry?.writer?.close()
        try? FileManager.default.removeItem(atPath: attachmentPath(session, id))
    }

    private func chunksNow(_ range: Range<Int>, of id: AttachmentID, in session: SessionID) throws -> [ByteBuffer] {
        guard let stored = journals.withLock({ $0[session]?[id]?.stored }) else { throw GroupSessionError.attachmentNotFound }
        let header = stored.header
        guard range.lowerBound >= 0, range.upperBound <= header.chunkCount else { throw GroupSessionError.attachmentNotFound }
        guard !range.isEmpty else { return [] }
        guard let reader = FileHandle(forReadingAtPath: attachmentPath(session, id) + "/chunks") else {
            throw GroupSessionError.attachmentNotFound
        }
        defer { try? reader.close() }
        let stride = Int(header.chunkSize) + JournalHeader.tagLength
        try reader.seek(toOffset: UInt64(range.lowerBound * stride))
        let total = range.reduce(0) { $0 + header.sealedLength(ofChunk: $1) }
        guard let data = try reader.read(upToCount: total), data.count == total else {
            throw GroupSessionError.protocolViolation("journal file of \(id) is shorter than its manifest")
        }
        var buffer = ByteBuffer(bytes: data)
        return range.map { buffer.readSlice(length: header.sealedLength(ofChunk: $0))! }
    }

    private func deleteSessionNow(_ session: SessionID) {
        let entries = journals.withLock { $0.removeValue(forKey: session) } ?? [:]
        for entry in entries.values { try? entry.writer?.close() }
        let fm = FileManager.default
        try? fm.removeItem(atPath: Self.journalPath(directory, session))
        let sessionPath = "\(directory)/sessions/\(session)"
        if (try? fm.contentsOfDirectory(atPath: sessionPath))?.isEmpty == true { try? fm.removeItem(atPath: sessionPath) }
        if !entries.isEmpty {
            logger.info("journal deleted", metadata: ["session": "\(session)", "attachments": "\(entries.count)"])
        }
    }
}
